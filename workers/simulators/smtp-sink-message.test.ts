import { describe, expect, it } from 'vitest';
import { decodeWords, readMessage } from './smtp-sink-message';

const raw = (lines: string[]): Buffer => Buffer.from(lines.join('\r\n') + '\r\n', 'utf8');

describe('readMessage', () => {
  it('unfolds headers, names them in lower case and decodes quoted-printable text', () => {
    const m = readMessage(
      raw([
        // A subject in two encoded words, folded between them: the space between adjacent words is not text.
        'Subject: =?UTF-8?Q?Kia_ora,_e_hoa_m=C4=81?=',
        ' =?UTF-8?B?IOKAlCDkvaDlpb0g8J+Ri/Cfj70=?=',
        'Message-ID: <1@x>',
        'X-Hermod-Message-Id: msg-1',
        'Content-Type: text/plain; charset=utf-8',
        'Content-Transfer-Encoding: quoted-printable',
        '',
        'Gr=C3=BC=C3=9Fe aus Z=C3=BCrich, a line broken by the encoder=',
        ' and continued',
        'second line',
      ]),
    );
    expect(m).toEqual({
      subject: 'Kia ora, e hoa mā — 你好 👋🏽',
      messageId: '<1@x>',
      headers: expect.objectContaining({ 'x-hermod-message-id': 'msg-1', 'content-transfer-encoding': 'quoted-printable' }),
      text: 'Grüße aus Zürich, a line broken by the encoder and continued\nsecond line',
    });
  });

  it('decodes base64 text in the declared charset', () => {
    const m = readMessage(
      raw(['Content-Type: text/plain; charset="iso-8859-1"', 'Content-Transfer-Encoding: base64', '', Buffer.from('caf\xe9', 'latin1').toString('base64')]),
    );
    expect(m.text).toBe('café');
  });

  it('takes the first text/plain part of a multipart message', () => {
    const m = readMessage(
      raw([
        'Content-Type: multipart/alternative; boundary="--b1"',
        '',
        '----b1',
        'Content-Type: text/plain; charset=utf-8',
        'Content-Transfer-Encoding: 8bit',
        '',
        'Привет, 你好 👋🏽',
        '----b1',
        'Content-Type: text/html',
        '',
        '<p>html body</p>',
        '----b1--',
      ]),
    );
    expect(m.text).toBe('Привет, 你好 👋🏽');
  });
});

describe('decodeWords', () => {
  it('joins adjacent encoded words, even when a character is split across them', () => {
    const bytes = Buffer.from('😀', 'utf8');
    const split = `=?UTF-8?B?${bytes.subarray(0, 2).toString('base64')}?= =?UTF-8?B?${bytes.subarray(2).toString('base64')}?=`;
    expect(decodeWords(`Hi ${split} and =?utf-8?Q?caf=C3=A9_au_lait?= done`)).toBe('Hi 😀 and café au lait done');
  });
});
