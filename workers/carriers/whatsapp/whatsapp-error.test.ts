import { describe, expect, it } from 'vitest';
import { whatsAppError } from './whatsapp-error';

describe('WhatsApp send errors', () => {
  it('treats throttling and outage codes as retryable even when Meta answers 400', () => {
    expect(whatsAppError(400, { error: { message: 'Rate limit hit', code: 130429 } })).toMatchObject({ code: 'carrier_transient', retryable: true });
    expect(whatsAppError(400, { error: { message: 'Pair rate limit', code: 131056 } }).retryable).toBe(true);
    expect(whatsAppError(429, undefined).code).toBe('carrier_transient');
    expect(whatsAppError(503, { error: { message: 'down', code: 2 } }).code).toBe('carrier_transient');
  });

  it('treats other 4xx answers as permanent', () => {
    expect(whatsAppError(400, { error: { message: 'Invalid parameter', code: 100 } })).toMatchObject({ code: 'carrier_rejected', retryable: false });
    expect(whatsAppError(401, { error: { message: 'Invalid OAuth access token', code: 190 } }).code).toBe('carrier_rejected');
    expect(whatsAppError(404, 'not json').code).toBe('carrier_rejected');
  });
});
