import { decodeGsm7 } from './gsm7';
import type { SmsPlan } from './sms-segments';

/**
 * A plan's parts read back as a handset would: the concatenation header
 * (05 00 03 ref total seq) of each part, then its GSM septets or UTF-16BE
 * units as text. The SMPP decoder is checked against planSms on its own side
 * (workers/carriers/smpp/short-message.test.ts).
 */
export function readParts(plan: SmsPlan): { text: string; concat?: { ref: number; total: number; seq: number } }[] {
  return plan.segments.map((s) => {
    const udh = plan.esmClass === 0x40;
    const body = udh ? s.subarray(s[0]! + 1) : s;
    const text = plan.encoding === 'gsm7' ? decodeGsm7(body) : Buffer.from(body).swap16().toString('utf16le');
    return udh ? { text, concat: { ref: s[3]!, total: s[4]!, seq: s[5]! } } : { text };
  });
}

export const joinText = (plan: SmsPlan): string =>
  readParts(plan)
    .map((p) => p.text)
    .join('');
