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
