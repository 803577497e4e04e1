import { describe, expect, it } from 'vitest';
import { whatsAppWebhook } from './whatsapp-webhook';

const statuses = (...list: Record<string, unknown>[]) => ({
  object: 'whatsapp_business_account',
  entry: [{ id: 'waba', changes: [{ field: 'messages', value: { messaging_product: 'whatsapp', statuses: list } }] }],
});

describe('WhatsApp webhook parsing', () => {
  it('maps sent, delivered, read and failed to hermod statuses with the time in milliseconds', () => {
    const reports = whatsAppWebhook.parse(
      statuses(
        { id: 'wamid.1', status: 'sent', timestamp: '1700000000', recipient_id: '64211234561' },
        { id: 'wamid.1', status: 'delivered', timestamp: '1700000001', recipient_id: '64211234561' },
        { id: 'wamid.1', status: 'read', timestamp: '1700000002', recipient_id: '64211234561' },
        { id: 'wamid.2', status: 'failed', timestamp: '1700000003', recipient_id: '64211234569', errors: [{ code: 131026, title: 'Message undeliverable' }] },
      ),
    );
    expect(reports).toEqual([
      { carrierId: 'wamid.1', status: 'sent', at: 1_700_000_000_000, errorCode: '' },
      { carrierId: 'wamid.1', status: 'received', at: 1_700_000_001_000, errorCode: '' },
      { carrierId: 'wamid.1', status: 'read', at: 1_700_000_002_000, errorCode: '' },
      { carrierId: 'wamid.2', status: 'failed', at: 1_700_000_003_000, errorCode: '131026', detail: '131026: Message undeliverable' },
    ]);
  });

  it('skips inbound messages, other fields, unknown statuses and malformed entries without throwing', () => {
    const body = {
      object: 'whatsapp_business_account',
      entry: [
        {
          changes: [
            {
              field: 'messages',
              value: { messages: [{ from: '64211234561', id: 'wamid.in', type: 'text', text: { body: 'Kia ora, e hoa mā — 你好 👋🏽' } }] },
            },
          ],
        },
        { changes: [{ field: 'account_update', value: { statuses: [{ id: 'x', status: 'sent', timestamp: '1' }] } }] },
        {
          changes: [
            {
              field: 'messages',
              value: { statuses: [{ id: 'wamid.3', status: 'deleted' }, { status: 'read' }, null, 'junk', { id: 'wamid.4', status: '__proto__' }] },
            },
          ],
        },
        'junk',
        { changes: 'junk' },
      ],
    };
    expect(whatsAppWebhook.parse(body)).toEqual([]);
    for (const junk of [undefined, null, 42, 'x', [], {}, { object: 'page', entry: [] }]) expect(whatsAppWebhook.parse(junk)).toEqual([]);
  });

  it('uses the arrival time when a status has no usable timestamp', () => {
    const before = Date.now();
    const [report] = whatsAppWebhook.parse(statuses({ id: 'wamid.5', status: 'delivered', timestamp: 'soon' }));
    expect(report!.at).toBeGreaterThanOrEqual(before);
  });
});
