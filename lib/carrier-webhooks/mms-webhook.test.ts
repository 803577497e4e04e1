import { describe, expect, it } from 'vitest';
import { mmsWebhook } from './mms-webhook';

describe('MMS delivery report parsing', () => {
  it('maps sent, delivered, failed and expired with their RFC 3339 times and error codes', () => {
    const at = '2025-01-01T12:00:00.250Z';
    expect(mmsWebhook.parse({ id: 'm1', status: 'sent', timestamp: at })).toEqual([{ carrierId: 'm1', status: 'sent', at: Date.parse(at), errorCode: '' }]);
    expect(mmsWebhook.parse({ id: 'm1', status: 'delivered', timestamp: at })[0]!.status).toBe('received');
    expect(mmsWebhook.parse({ id: 'm1', status: 'failed', timestamp: at, error_code: 'unreachable' })[0]).toMatchObject({
      status: 'failed',
      errorCode: 'unreachable',
    });
    expect(mmsWebhook.parse({ id: 'm1', status: 'expired', timestamp: at, error_code: 4005 })[0]).toMatchObject({ status: 'expired', errorCode: '4005' });
  });

  it('takes a batch of reports and skips unknown statuses and junk without throwing', () => {
    const batch = [{ id: 'm1', status: 'delivered', timestamp: 'x' }, { id: 'm2', status: 'queued' }, { status: 'sent' }, null, 'junk'];
    const before = Date.now();
    const reports = mmsWebhook.parse(batch);
    expect(reports.map((r) => r.carrierId)).toEqual(['m1']);
    expect(reports[0]!.at).toBeGreaterThanOrEqual(before);
    for (const junk of [undefined, null, 3, 'x', {}, { id: 'm3', status: 'constructor' }]) expect(mmsWebhook.parse(junk)).toEqual([]);
  });
});
