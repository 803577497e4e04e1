import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type DeliveryAnswer, type DeliveryRequest, decodeAnswers, decodeRequests, encodeAnswers, encodeRequests } from './callback-delivery-wire';

const worldText = fc.oneof(
  fc.constantFrom('Kia ora, e hoa mā — tēnā koe', '你好 👋🏽', '👨‍👩‍👧', 'line\u2028separator', ''),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
);
const request: fc.Arbitrary<DeliveryRequest> = fc.record(
  {
    ref: fc.nat(),
    url: fc.constantFrom('http://localhost:8080/status', 'https://hooks.example.co.nz/hermod?tōmuri=1', 'https://user:pāss@receiver.example.com/cb'),
    secret: worldText,
    eventId: fc.uuid(),
    body: worldText.map((content) => JSON.stringify({ content })),
    timeoutMs: fc.nat({ max: 120_000 }),
    allowPrivate: fc.boolean(),
    traceparent: fc.constantFrom('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'),
    // A rotation's old secret, signing beside the new one.
    previousSecret: worldText.filter((s) => s !== ''),
    eventAt: fc.integer({ min: 0, max: 4_102_444_800_000 }),
  },
  { requiredKeys: ['ref', 'url', 'secret', 'eventId', 'body', 'timeoutMs', 'allowPrivate'] },
);
const answer: fc.Arbitrary<DeliveryAnswer> = fc.oneof(
  fc.record(
    { ref: fc.nat(), ok: fc.constant(true as const), status: fc.integer({ min: 200, max: 299 }), rateLimit: fc.nat() },
    { requiredKeys: ['ref', 'ok', 'status'] },
  ),
  fc.record({
    ref: fc.nat(),
    ok: fc.constant(false as const),
    code: fc.constantFrom('unavailable', 'invalid_argument'),
    message: worldText,
    retryable: fc.boolean(),
  }),
  fc.record({
    ref: fc.nat(),
    ok: fc.constant(false as const),
    code: fc.constant('unavailable'),
    message: worldText,
    retryable: fc.constant(true),
    retryAfterSeconds: fc.integer({ min: 0, max: 3600 }),
  }),
);

describe('what crosses to the callback delivery threads and back', () => {
  it('arrives as it was handed over: every request, in order, whatever its text, timeout and flags', () => {
    fc.assert(
      fc.property(fc.array(request, { maxLength: 20 }), (requests) => {
        expect(decodeRequests(encodeRequests(requests))).toEqual(requests);
      }),
    );
  });

  it('brings every answer back to its own request, delivered or failed, with the receiver’s rate limit when it gave one', () => {
    fc.assert(
      fc.property(fc.array(answer, { maxLength: 20 }), (answers) => {
        expect(decodeAnswers(encodeAnswers(answers))).toEqual(answers);
      }),
    );
  });
});
