import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GSM7_BASIC, GSM7_ESCAPE, GSM7_EXTENSION, decodeGsm7, encodeGsm7 } from '../../../core/domain/gsm7';
import { planSms, withMessageClass } from '../../../core/domain/sms-segments';
import { alphabetOf, decodeShortMessage, splitUserData } from './short-message';

describe('short_message decoding', () => {
  it('reads 8-bit and 16-bit reference concatenation headers and skips other elements', () => {
    expect(splitUserData(Buffer.from('050003070302' + '41', 'hex'), true)).toMatchObject({ concat: { ref: 7, total: 3, seq: 2 } });
    expect(splitUserData(Buffer.from('0608041234020141', 'hex'), true)).toMatchObject({ concat: { ref: 0x1234, total: 2, seq: 1 } });
    const withPort = splitUserData(Buffer.from('0b050400000000' + '000306020141', 'hex'), true);
    expect(withPort.concat).toEqual({ ref: 6, total: 2, seq: 1 });
    expect(withPort.payload.toString('hex')).toBe('41');
  });

  it('reads a data coding with a message class as its alphabet, so a classed text decodes as the one without', () => {
    for (const text of ['Class two: kept on the SIM {€}', 'Tēnā koe — 你好 📟']) {
      const plan = planSms(text);
      for (const smsClass of [undefined, 0, 1, 2, 3]) {
        const dataCoding = withMessageClass(plan.dataCoding, smsClass);
        expect(alphabetOf(dataCoding)).toBe(plan.encoding);
        expect(decodeShortMessage(plan.segments[0]!, dataCoding, false).text).toBe(text);
      }
    }
    expect([1, 2, 3].map((c) => withMessageClass(0x00, c))).toEqual([0x11, 0x12, 0x13]);
    expect([1, 2, 3].map((c) => withMessageClass(0x08, c))).toEqual([0x19, 0x1a, 0x1b]);
  });

  it('decodes GSM, UCS-2 and Latin-1 bodies', () => {
    expect(decodeShortMessage(Buffer.from('48691b65', 'hex'), 0x00, false)).toEqual({ text: 'Hi€' });
    expect(decodeShortMessage(Buffer.from('0500030103020048d83dde00', 'hex'), 0x08, true)).toEqual({ text: 'H😀', concat: { ref: 1, total: 3, seq: 2 } });
    expect(decodeShortMessage(Buffer.from('e9', 'hex'), 0x03, false).text).toBe('é');
    expect(decodeShortMessage(Buffer.from('48', 'hex'), 0xf0, false).text).toBe('H');
  });

  it('reads a data_coding 0 reply that the SMSC sent in Latin-1 as Latin-1, accents and all', () => {
    const text = 'Olá, não posso às 10h, ça va? Müller ¿Qué? 1½ £5 ©';
    expect(decodeShortMessage(Buffer.from(text, 'latin1'), 0x00, false).text).toBe(text);
    expect(decodeShortMessage(Buffer.concat([Buffer.from('050003070201', 'hex'), Buffer.from('à bientôt', 'latin1')]), 0x00, true)).toEqual({
      text: 'à bientôt',
      concat: { ref: 7, total: 2, seq: 1 },
    });
  });

  it('still reads a data_coding 0 reply in GSM 7-bit as GSM 7-bit, its own é ñ ü € @ $ _ included', () => {
    const text = 'é ñ ü € @ $ _ {Ça} Øre ¤ §1 ¿Qué? ¡Sì! ΔΣΩ [~^|\\]';
    expect(decodeShortMessage(encodeGsm7(text), 0x00, false).text).toBe(text);
  });

  it('reads back any Latin-1 text with an accent sent with data_coding 0, and any GSM 7-bit text sent as unpacked septets', () => {
    const latin1Char = fc.integer({ min: 0x20, max: 0xff }).map((c) => String.fromCharCode(c));
    const accented = fc.integer({ min: 0xa0, max: 0xff }).map((c) => String.fromCharCode(c));
    const latin1 = fc
      .tuple(fc.string({ unit: latin1Char, maxLength: 80 }), accented, fc.string({ unit: latin1Char, maxLength: 80 }))
      .map(([a, b, c]) => a + b + c);
    fc.assert(
      fc.property(latin1, (text) => {
        expect(decodeShortMessage(Buffer.from(text, 'latin1'), 0x00, false).text).toBe(text);
      }),
      { numRuns: 500 },
    );
    const gsmChars = [...GSM7_BASIC].filter((_, i) => i !== GSM7_ESCAPE).concat([...GSM7_EXTENSION.values()]);
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...gsmChars), maxLength: 160 }), (text) => {
        expect(decodeShortMessage(encodeGsm7(text), 0x00, false).text).toBe(text);
      }),
      { numRuns: 500 },
    );
  });

  it('treats a UDH that claims to be longer than the message as absent', () => {
    const { payload, concat } = splitUserData(Buffer.from('ff0003', 'hex'), true);
    expect(concat).toBeUndefined();
    expect(decodeGsm7(payload)).toHaveLength(3);
  });

  it('reads back every part planSms makes, text and concatenation header, in any script', () => {
    const texts = ['x'.repeat(161), '{curly} [square] ~tilde~ '.repeat(30), 'Kia ora, e hoa mā — tēnā koe! Привет, 你好世界 👋🏽🎉 '.repeat(20), '🇳🇿'];
    for (const text of texts) {
      const plan = planSms(text, { reference: 0x2a });
      const parts = plan.segments.map((s) => decodeShortMessage(s, plan.dataCoding, plan.esmClass === 0x40));
      expect(parts.map((p) => p.text).join('')).toBe(text);
      if (plan.count > 1) expect(parts.map((p) => p.concat)).toEqual(parts.map((_, i) => ({ ref: 0x2a, total: plan.count, seq: i + 1 })));
    }
  });
});
