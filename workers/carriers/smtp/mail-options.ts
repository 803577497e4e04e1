import type { SendMailOptions } from 'nodemailer/lib/mailer';
import type { OutboundJob } from '../../../core/ports/bus-payloads';
import { verpAddress } from './verp';

const ADDRESS = /^[^\s@<>()[\]",;:\\]+@[^\s@<>()[\]",;:\\]+$/;

export const looksLikeAddress = (value: string): boolean => ADDRESS.test(value);

/**
 * The e-mail for one job: plain text only. A media message carries its link
 * on its own line; the file is never fetched or attached, so a caller's URL
 * cannot make this process read from the network or the disk. With a bounce
 * domain, the envelope sender is the message's own return path (verp.ts).
 */
export function mailOptions(job: OutboundJob, defaultFrom: string, bounceDomain = ''): SendMailOptions {
  const url = job.im?.media?.url;
  const headers: Record<string, string> = { 'X-Hermod-Message-Id': job.id };
  if (job.im?.reference) headers['X-Hermod-Reference'] = job.im.reference;
  const from = looksLikeAddress(job.source) ? job.source : defaultFrom;
  const returnPath = bounceDomain ? verpAddress(job.id, bounceDomain) : undefined;
  return {
    from,
    to: job.destination,
    ...(returnPath ? { envelope: { from: returnPath, to: job.destination } } : {}),
    subject: job.im?.subject || 'Message',
    text: url ? [job.content, url].filter((part) => part !== '').join('\n') : job.content,
    headers,
  };
}
