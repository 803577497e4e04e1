import { expect } from 'vitest';
import { eventually } from './eventually';
import type { HermodWithChannels } from './hermod-with-channels';

const FINAL = new Set(['received', 'read', 'failed', 'rejected', 'expired']);

/**
 * Sends an Intelligent Messaging e-mail and a WhatsApp message (non-ASCII
 * text) and waits until each has a final status callback, the e-mail at the
 * SMTP sink and the WhatsApp message at the simulated Cloud API.
 */
export async function expectImEmailAndWhatsAppFinal(h: HermodWithChannels, mobile: string): Promise<void> {
  const email = await h.client.post('/rest/im/v1/message', {
    destination: { email: 'hoa@example.com' },
    message: { type: 'text', text: { body: 'Привет, 你好世界 🎉' } },
    delivery_attempts: [{ channel: 'email' }],
  });
  const wab = await h.client.post('/rest/im/v1/message', {
    destination: { mobile },
    message: { type: 'text', text: { body: 'Kia ora, e hoa mā' } },
    delivery_attempts: [{ channel: 'wab' }],
  });
  expect(email.status, email.text).toBe(202);
  expect(wab.status, wab.text).toBe(202);
  for (const id of [email.json.id as string, wab.json.id as string]) {
    await eventually(async () => (h.callbacks.some((c) => c.body.id === id && FINAL.has(c.body.status)) ? true : undefined), 60_000, 200);
  }
  expect(h.smtp.mails.some((m) => m.to.includes('hoa@example.com'))).toBe(true);
  expect(h.wab.received.some((m) => m.to === mobile.replace(/^\+/, ''))).toBe(true);
}
