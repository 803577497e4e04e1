import encoding from 'k6/encoding';
import type { Options } from 'k6/options';

/** Settings every script shares, from the environment (k6 run -e NAME=value or exported variables). */
export const BASE_URL = __ENV.HERMOD_URL || 'https://127.0.0.1:8443';
export const RATE = Number(__ENV.RATE || 500);
/** A script's own default rate where the shared one would be too much (Campaign Manager: each iteration imports a list). */
export const rateOr = (fallback: number): number => Number(__ENV.RATE || fallback);
export const DURATION = __ENV.DURATION || '1m';
export const PRE_ALLOCATED_VUS = Number(__ENV.VUS || 100);
export const MAX_VUS = Number(__ENV.MAX_VUS || 1000);

export function basicAuth(): string {
  const user = __ENV.HERMOD_USER || 'acme';
  const pass = __ENV.HERMOD_PASS || 'secret';
  return `Basic ${encoding.b64encode(`${user}:${pass}`)}`;
}

/** An open model: requests arrive at RATE per second whatever the latency, so overload shows as latency and errors. */
export function openModel(thresholdP95Ms: number, thresholdP99Ms: number, rate = RATE): Options {
  return {
    insecureSkipTLSVerify: __ENV.INSECURE !== 'false',
    scenarios: {
      arrivals: {
        executor: 'constant-arrival-rate',
        rate,
        timeUnit: '1s',
        duration: DURATION,
        preAllocatedVUs: PRE_ALLOCATED_VUS,
        maxVUs: MAX_VUS,
      },
    },
    thresholds: {
      http_req_duration: [`p(95)<${thresholdP95Ms}`, `p(99)<${thresholdP99Ms}`],
      http_req_failed: ['rate<0.001'],
      checks: ['rate>0.999'],
    },
  };
}

/** A destination per iteration, spread over many numbers so per-destination ordering does not serialise the load. */
export function destination(): string {
  return `+6421${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}`;
}

/**
 * What users send, not ASCII: te reo Māori with macrons, emoji (a ZWJ
 * family, skin tones, a flag), CJK, Arabic, and texts long enough to go in
 * two parts (GSM 7-bit past 160, UCS-2 past 70). One at random per request.
 */
export const TEXTS = [
  'Kia ora e te whānau — tēnā koutou katoa 👋🏽',
  'Ka kite anō āpōpō. Ngā mihi nui ki a koe, e hoa mā!',
  '你好，你的订单已发货 📦 请查收',
  'مرحبا، تم شحن طلبك 🚚',
  'Whānau 👨‍👩‍👧‍👦 hui at 6pm 🇳🇿 — bring a plate 🍽️',
  `Your appointment is confirmed for Tuesday at 10:30. Reply YES to confirm or NO to cancel. ${'Thanks for choosing us. '.repeat(4)}`,
  `Kia ora! He whakamaumahara tēnei mō tō huihuinga āpōpō ki Ōtautahi 🗓️ ${'Ngā mihi. '.repeat(6)}`,
];

export function text(): string {
  return TEXTS[Math.floor(Math.random() * TEXTS.length)]!;
}

/** A share of sends (RETRY_SHARE, default 0.05) sent again with the same Idempotency-Key, as a client whose answer was lost. */
export const RETRY_SHARE = Number(__ENV.RETRY_SHARE ?? 0.05);

/** A random UUID (version 4 form) for an Idempotency-Key. */
export function idempotencyKey(): string {
  const hex = (n: number) => Array.from({ length: n }, () => Math.floor(Math.random() * 16).toString(16)).join('');
  return `${hex(8)}-${hex(4)}-4${hex(3)}-${'89ab'[Math.floor(Math.random() * 4)]}${hex(3)}-${hex(12)}`;
}
