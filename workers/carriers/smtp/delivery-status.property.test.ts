import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DeliveryStatusError, DSN_ACTIONS, parseDeliveryStatus } from './delivery-status';
import { RFC3464_MULTI_RECIPIENT } from './dsn-fixtures';
import { readDsnMessage } from './dsn-message';

const token = fc.string({ unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789-'.split('')), minLength: 1, maxLength: 12 });
const domain = fc.array(token, { minLength: 1, maxLength: 3 }).map((labels) => `${labels.join('.')}.example`);
/** Local parts as people have them: ASCII, te reo Māori with macrons, CJK, emoji. */
const local = fc.oneof(token, fc.constantFrom('tēnā', 'mā.koe', '田中', 'ana+👋🏽'));
const address = fc.tuple(local, domain).map(([l, d]) => `${l}@${d}`);
/** Diagnostic text without line breaks, and not starting or ending with blanks (unfolding trims them). */
const diagnostic = fc
  .string({ unit: 'grapheme', maxLength: 60 })
  .map((s) =>
    s
      .replace(/[\r\n]/g, ' ')
      .trim()
      .replace(/\s+/g, ' '),
  )
  .filter((s) => s !== '');
const recipient = fc.record({
  finalRecipient: address,
  action: fc.constantFrom(...DSN_ACTIONS),
  status: fc.tuple(fc.constantFrom(2, 4, 5), fc.integer({ min: 0, max: 999 }), fc.integer({ min: 0, max: 999 })).map((c) => c.join('.')),
  diagnosticCode: diagnostic.map((d) => `smtp; ${d}`),
});

/** The fields as an MTA writes them, with a fold inserted at a word boundary of the diagnostic when `fold` says so. */
function write(mta: string, recipients: Rec[], fold: boolean, eol: string): string {
  const groups = recipients.map((r) => {
    const diag = fold ? r.diagnosticCode.replace(' ', `${eol}    `) : r.diagnosticCode;
    return [`Final-Recipient: rfc822; ${r.finalRecipient}`, `Action: ${r.action}`, `Status: ${r.status}`, `Diagnostic-Code: ${diag}`].join(eol);
  });
  return [`Reporting-MTA: dns; ${mta}`, ...groups].join(eol + eol) + eol;
}
type Rec = { finalRecipient: string; action: string; status: string; diagnosticCode: string };

describe('delivery status parser (property)', () => {
  it('reads back every recipient’s address, action, status and diagnostic, folded or not, CRLF or LF', () => {
    fc.assert(
      fc.property(domain, fc.array(recipient, { minLength: 1, maxLength: 5 }), fc.boolean(), fc.constantFrom('\r\n', '\n'), (mta, recipients, fold, eol) => {
        const parsed = parseDeliveryStatus(write(mta, recipients, fold, eol));
        expect(parsed.reportingMta).toBe(mta);
        expect(
          parsed.recipients.map((r) => ({ finalRecipient: r.finalRecipient, action: r.action, status: r.status, diagnosticCode: r.diagnosticCode })),
        ).toEqual(recipients);
      }),
    );
  });

  it('either reads any text or refuses it with a DeliveryStatusError, never another failure', () => {
    const lines = fc.array(
      fc.oneof(
        fc.string({ unit: 'grapheme', maxLength: 40 }),
        fc.constantFrom('', 'Final-Recipient: rfc822; a@b.example', 'Action: failed', 'Status: 5.1.1', '  folded', 'Action:', 'Status: 9.9'),
      ),
      { maxLength: 12 },
    );
    fc.assert(
      fc.property(lines, (ls) => {
        try {
          const parsed = parseDeliveryStatus(ls.join('\r\n'));
          for (const r of parsed.recipients) expect(r.status).toMatch(/^[245]\.\d{1,3}\.\d{1,3}$/);
        } catch (err) {
          expect(err).toBeInstanceOf(DeliveryStatusError);
        }
      }),
    );
  });

  it('reads any mail, a report cut or spliced anywhere included, or refuses it with a DeliveryStatusError', () => {
    const lines = RFC3464_MULTI_RECIPIENT.split('\r\n');
    const mangled = fc.oneof(
      fc.string({ unit: 'grapheme', maxLength: 200 }),
      fc.integer({ min: 0, max: RFC3464_MULTI_RECIPIENT.length }).map((n) => RFC3464_MULTI_RECIPIENT.slice(0, n)),
      fc
        .tuple(fc.integer({ min: 0, max: lines.length }), fc.array(fc.string({ unit: 'grapheme', maxLength: 30 }), { maxLength: 3 }))
        .map(([at, junk]) => [...lines.slice(0, at), ...junk, ...lines.slice(at)].join('\r\n')),
    );
    fc.assert(
      fc.property(mangled, (raw) => {
        try {
          readDsnMessage(Buffer.from(raw, 'utf8'));
        } catch (err) {
          expect(err).toBeInstanceOf(DeliveryStatusError);
        }
      }),
    );
  });
});
