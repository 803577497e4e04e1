import type { SendMailOptions } from 'nodemailer/lib/mailer';
import type { OutboundJob } from '../../../core/ports/bus-payloads';

const ADDRESS = /^[^\s@<>()[\]",;:\\]+@[^\s@<>()[\]",;:\\]+$/;

export const looksLikeAddress = (value: string): boolean => ADDRESS.test(value);

/**
 * The e-mail for one job: plain text only. A media message carries its link
 * on its own line; the file is never fetched or attached, so a caller's URL
 * cannot make this process read from the network or the disk.
 */
export function mailOptions(job: OutboundJob, defaultFrom: string): SendMailOptions {
  const url = job.im?.media?.url;
  const headers: Record<string, string> = { 'X-Hermod-Message-Id': job.id };
  if (job.im?.reference) headers['X-Hermod-Reference'] = job.im.reference;
  return {
    from: looksLikeAddress(job.source) ? job.source : defaultFrom,
    to: job.destination,
    subject: job.im?.subject || 'Message',
    text: url ? [job.content, url].filter((part) => part !== '').join('\n') : job.content,
    headers,
  };
}
