import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CommandId } from './command-id';
import { MoAssembler } from './mo-assembler';
import type { SmPdu } from './pdu';
import { planSmsAsWritten } from '../../../core/domain/sms-segments';
import { smppAddress } from './smpp-address';
import { TlvTag, uint16Tlv } from './tlv';

/** The deliver_sm an SMSC sends for each part of a reply from `source` to `destination`, its text as the handset wrote it. */
function deliverSms(text: string, options: { source?: string; destination?: string; reference?: number; userMessageReference?: number } = {}): SmPdu[] {
  const plan = planSmsAsWritten(text, options.reference !== undefined ? { reference: options.reference } : {});
  const src = smppAddress(options.source ?? '+6421000001');
  const dst = smppAddress(options.destination ?? '4001');
  return plan.segments.map((shortMessage) => ({
    commandId: CommandId.deliver_sm,
    commandStatus: 0,
    sequenceNumber: 1,
    sourceAddr: src.addr,
    sourceAddrTon: src.ton,
    destinationAddr: dst.addr,
    destAddrTon: dst.ton,
    esmClass: plan.esmClass,
    registeredDelivery: 0,
    dataCoding: plan.dataCoding,
    shortMessage,
    tlvs: options.userMessageReference !== undefined ? [uint16Tlv(TlvTag.user_message_reference, options.userMessageReference)] : undefined,
  }));
}

/** A part of a long reply as an SMSC whose default alphabet is Latin-1 sends it: data_coding 0, a concatenation UDH. */
function latin1Part(text: string, concat: { ref: number; total: number; seq: number }): SmPdu {
  return {
    ...deliverSms('x')[0]!,
    esmClass: 0x40,
    dataCoding: 0,
    shortMessage: Buffer.concat([Buffer.of(5, 0, 3, concat.ref, concat.total, concat.seq), Buffer.from(text, 'latin1')]),
  };
}

describe('MoAssembler', () => {
  it('names the handset’s message reference, so a redelivered deliver_sm can be recognised', () => {
    const mo = new MoAssembler().add(deliverSms('Kia ora, e hoa mā', { userMessageReference: 513 })[0]!);
    expect(mo).toMatchObject({ source: '+6421000001', destination: '4001', text: 'Kia ora, e hoa mā', carrierRef: 'umr:513', parts: 1 });
    expect(new MoAssembler().add(deliverSms('你好')[0]!)?.carrierRef).toBe('');
  });

  it('reads a sender in its national format as its international number when the carrier’s country is given, and joins its parts', () => {
    const national = (pdu: SmPdu): SmPdu => ({ ...pdu, sourceAddr: '0211234567', sourceAddrTon: 2 });
    const assembler = new MoAssembler(120_000, '64');
    expect(assembler.add(national(deliverSms('STOP')[0]!))).toMatchObject({ source: '+64211234567', destination: '4001', text: 'STOP' });
    const parts = deliverSms('Kia ora! Kua tae mai tāku pūkete? '.repeat(4), { reference: 9 }).map(national);
    expect(parts.length).toBeGreaterThan(1);
    const whole = parts.map((p) => assembler.add(p)).find((m) => m !== undefined);
    expect(whole).toMatchObject({ source: '+64211234567', text: 'Kia ora! Kua tae mai tāku pūkete? '.repeat(4) });
    expect(new MoAssembler().add(national(deliverSms('STOP')[0]!))?.source).toBe('0211234567');
  });

  it('takes a decomposed reply as the handset sent it, not composed', () => {
    const text = 'Tēnā koe, kua tae mai'.normalize('NFD');
    const mo = new MoAssembler().add(deliverSms(text)[0]!);
    expect(mo?.text).toBe(text);
    expect(mo?.text).not.toBe(text.normalize('NFC'));
  });

  it('joins the parts of a long reply in any order, naming its concatenation reference', () => {
    const text = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 400 });
    fc.assert(
      fc.property(text, fc.integer({ min: 0, max: 255 }), fc.integer(), (body, reference, seed) => {
        const parts = deliverSms(body, { reference });
        // Deterministic shuffle from the seed: carriers deliver parts in any order.
        const order = parts
          .map((p, i) => ({ p, k: Math.sin(seed + i) }))
          .sort((a, b) => a.k - b.k)
          .map((x) => x.p);
        const assembler = new MoAssembler();
        const results = order.map((p) => assembler.add(p));
        const whole = results[results.length - 1];
        expect(results.slice(0, -1).every((r) => r === undefined)).toBe(true);
        expect(whole?.text).toBe(body);
        expect(whole?.carrierRef).toBe(parts.length > 1 ? `cat:${reference}/${parts.length}` : '');
      }),
      { numRuns: 200 },
    );
  });

  it('reads a long data_coding 0 reply sent in Latin-1 as Latin-1 throughout, even a part with no accent in it', () => {
    const parts = ['Write to me at ana@example.pt ', 'à tarde, não de manhã'];
    const pdus = parts.map((text, i) => latin1Part(text, { ref: 4, total: parts.length, seq: i + 1 }));
    const mo = new MoAssembler();
    expect(mo.add(pdus[0]!)).toBeUndefined();
    expect(mo.add(pdus[1]!)).toMatchObject({ text: parts.join(''), dataCoding: 0, parts: 2 });
    // Passed on without its middle part, the parts that came are still read alike.
    const three = ['Write to me at ana@example.pt ', 'amanhã ', 'à tarde'].map((text, i) => latin1Part(text, { ref: 5, total: 3, seq: i + 1 }));
    const late = new MoAssembler(1000);
    late.add(three[0]!, 0);
    late.add(three[2]!, 0);
    expect(late.expire(1000)).toEqual([expect.objectContaining({ text: 'Write to me at ana@example.pt …à tarde', missing: [2] })]);
  });

  it('passes on a long reply whose parts never all came, once it has waited for them, with a mark where parts are missing', () => {
    const text = 'Kia ora, e hoa mā — he pātai tāku mō te hui āpōpō 👋🏽 '.repeat(3);
    const parts = deliverSms(text, { reference: 77 });
    expect(parts.length).toBeGreaterThanOrEqual(3);
    const mo = new MoAssembler(1000);
    const t0 = 1_700_000_000_000;
    expect(mo.add(parts[0]!, t0)).toBeUndefined();
    expect(mo.add(parts[2]!, t0 + 10)).toBeUndefined();
    expect(mo.expire(t0 + 999)).toEqual([]);
    const [late] = mo.expire(t0 + 1000);
    expect(late).toMatchObject({ source: '+6421000001', destination: '4001', parts: parts.length, missing: [2], carrierRef: `cat:77/${parts.length}` });
    expect(late!.text.startsWith('Kia ora, e hoa mā — ')).toBe(true);
    expect(late!.text).toContain('…');
    // Passed on once: nothing is left to expire, and a late part 2 starts a message of its own.
    expect(mo.expire(t0 + 5000)).toEqual([]);
  });

  it('drops a part the carrier delivers again after its long reply was passed on whole, rather than passing it on later as a second, cut-off reply', () => {
    const text = 'Kua tae mai tāku pūkete? Carriers resend a deliver_sm when our answer is lost. '.repeat(3);
    const parts = deliverSms(text, { reference: 78 });
    expect(parts.length).toBeGreaterThanOrEqual(3);
    const mo = new MoAssembler(120_000);
    const t0 = 1_700_000_000_000;
    const results = parts.map((p, i) => mo.add(p, t0 + i));
    expect(results.at(-1)?.text).toBe(text);
    // Part 2 again, a little later, and part 1 again in another minute: neither is a reply of its own.
    expect(mo.add(parts[1]!, t0 + 5_000)).toBeUndefined();
    expect(mo.add(parts[0]!, t0 + 60_000)).toBeUndefined();
    expect(mo.expire(t0 + 200_000)).toEqual([]);
    // A new long reply that takes the same reference, with other text, is joined as before.
    const next = deliverSms('He pātai anō tāku — he aha te wā o te hui? '.repeat(4), { reference: 78 });
    const again = next.map((p, i) => mo.add(p, t0 + 70_000 + i));
    expect(again.at(-1)?.text).toBe('He pātai anō tāku — he aha te wā o te hui? '.repeat(4));
  });

  it('joins whole a new long reply that takes the last one’s reference and starts as it did', () => {
    const first = 'Kia ora, about order 123: please cancel it, I ordered the wrong size. Kua hē tāku. '.repeat(2);
    const second = `${first.slice(0, -10)}kāore pai!`;
    const mo = new MoAssembler(120_000);
    const t0 = 1_700_000_000_000;
    const a = deliverSms(first, { reference: 7 });
    const b = deliverSms(second, { reference: 7 });
    expect(b).toHaveLength(a.length);
    expect(b[0]!.shortMessage.equals(a[0]!.shortMessage)).toBe(true);
    expect(a.map((p, i) => mo.add(p, t0 + i)).at(-1)?.text).toBe(first);
    expect(b.map((p, i) => mo.add(p, t0 + 30_000 + i)).at(-1)?.text).toBe(second);
    expect(mo.expire(t0 + 300_000)).toEqual([]);
  });

  it('passes on every incomplete long reply at once when asked to (a stop), rather than losing it', () => {
    const parts = deliverSms('你好，世界！'.repeat(30), { reference: 9 });
    const mo = new MoAssembler();
    expect(mo.add(parts[1]!)).toBeUndefined();
    expect(parts).toHaveLength(3);
    expect(mo.expire(Date.now(), true)).toEqual([expect.objectContaining({ missing: [1, 3], parts: 3, text: expect.stringMatching(/^…好.*…$/) })]);
  });
});
