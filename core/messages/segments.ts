import { measureSms } from '../domain/sms-segments';

/** How many SMS segments the content takes (GSM 03.38 7-bit when possible, else UCS-2). */
export function countSegments(content: string): number {
  return measureSms(content).count;
}
