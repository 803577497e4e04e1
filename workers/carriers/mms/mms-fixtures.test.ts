import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mmsWebhook } from '../../../lib/carrier-webhooks/mms-webhook';
import { DELIVERY_REPORTS, ERROR_ANSWER, LOOKUP_ANSWER, SEND_REQUEST } from './mms-fixtures';
import { createMmsCarrier, mmsRequestBody } from './mms-carrier';
import { imJob, quietLog, sendError } from '../http/http-carrier-test-kit';

describe('the MMS contract’s documented examples', () => {
  it('are what the adapter writes for the same message', () => {
    const body = mmsRequestBody(
      {
        id: SEND_REQUEST.client_ref,
        applicationId: 'app',
        channel: 'mms',
        destination: SEND_REQUEST.to,
        source: '',
        content: SEND_REQUEST.text,
        acceptedAt: 0,
        im: { type: 'media', subject: SEND_REQUEST.subject, media: { url: SEND_REQUEST.media[0]!.url, mimeType: 'image/jpeg' } },
      },
      SEND_REQUEST.from,
    );
    expect(body).toEqual(SEND_REQUEST);
  });

  it('parse as delivery reports: sent, received, failed and expired with their times and error codes', () => {
    const body = Buffer.from(JSON.stringify(DELIVERY_REPORTS));
    const signature = `sha256=${createHmac('sha256', 'shared-secret').update(body).digest('hex')}`;
    expect(mmsWebhook.verify(body, { 'x-signature': signature }, 'shared-secret')).toBe(true);
    expect(mmsWebhook.parse(JSON.parse(body.toString('utf8')))).toEqual([
      { carrierId: LOOKUP_ANSWER.messages[0]!.id, status: 'sent', at: Date.parse('2026-11-24T10:15:01Z'), errorCode: '' },
      { carrierId: LOOKUP_ANSWER.messages[0]!.id, status: 'received', at: Date.parse('2026-11-24T10:15:03.250Z'), errorCode: '' },
      { carrierId: '7b6a5c4d3e2f1a0b9c8d7e6f', status: 'failed', at: Date.parse('2026-11-24T10:15:04Z'), errorCode: 'unreachable' },
      { carrierId: '0a1b2c3d4e5f6a7b8c9d0e1f', status: 'expired', at: Date.parse('2026-11-24T10:20:00Z'), errorCode: '4005' },
    ]);
  });

  it('an error answer becomes a refusal naming the provider’s message and code; an accepted answer’s id becomes the carrier id', async () => {
    let answer: { status: number; body: unknown } = { status: 400, body: ERROR_ANSWER };
    const server = http.createServer((_req, res) => res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body)));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const port = (server.address() as AddressInfo).port;
      const carrier = createMmsCarrier(
        { baseUrl: `http://localhost:${port}`, token: 't', sender: SEND_REQUEST.from, webhookSecret: 's', apiVersion: '' },
        quietLog,
      );
      const job = imJob('mms', SEND_REQUEST.to);
      const err = await sendError(carrier.send(job));
      expect(err).toMatchObject({ code: 'carrier_rejected', message: expect.stringContaining('to must be an E.164 number (invalid_request)') });
      answer = { status: 201, body: { id: LOOKUP_ANSWER.messages[0]!.id } };
      expect(await carrier.send(job)).toEqual({ carrierIds: [LOOKUP_ANSWER.messages[0]!.id] });
    } finally {
      server.close();
    }
  });

  it('any JSON a provider might post parses to reports with a known status, or to none, never an exception (property)', () => {
    const report = fc.record(
      {
        id: fc.oneof(fc.string({ unit: 'grapheme', maxLength: 20 }), fc.integer()),
        status: fc.oneof(fc.constantFrom('sent', 'delivered', 'failed', 'expired', 'queued', '__proto__'), fc.string()),
        timestamp: fc.oneof(
          fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
          fc.string(),
        ),
        error_code: fc.oneof(fc.string(), fc.integer(), fc.constant(null)),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(fc.oneof(report, fc.array(report, { maxLength: 5 }), fc.jsonValue()), (body) => {
        for (const r of mmsWebhook.parse(body)) {
          expect(['sent', 'received', 'failed', 'expired']).toContain(r.status);
          expect(r.carrierId).not.toBe('');
          expect(Number.isFinite(r.at)).toBe(true);
        }
      }),
    );
  });
});
