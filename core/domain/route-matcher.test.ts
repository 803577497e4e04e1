import { describe, expect, it } from 'vitest';
import { parseCarriersFile } from '../../lib/carriers-file';
import { createRouteMatcher } from './route-matcher';

const FILE = `
carriers:
  - { name: spark, host: localhost, port: 2776 }
  - { name: one-nz, host: localhost, port: 2777 }
  - { name: telstra, host: localhost, port: 2778 }
routes:
  - name: brand-senders
    match: { source: alphanumeric, prefix: '+64' }
    carrier: one-nz
  - name: nz-mobile
    match: { prefix: ['+6421', '+6422'] }
    failover: [spark, one-nz]
  - name: au-split
    match: { prefix: '+61' }
    split: { telstra: 3, spark: 1 }
default_route:
  failover: [telstra, spark]
`;

describe('routes from the carriers file', () => {
  const decide = createRouteMatcher(parseCarriersFile(FILE, 'carriers.yaml', {}));
  const m = (destination: string, source = '+6498765432', id = 'a') => ({ id, destination, source, applicationId: 'acme', channel: 'sms' });

  it('sends a Māori-named brand sender to its carrier before the prefix rules see it', () => {
    expect(decide(m('+64211234567', 'Kōrero'))).toEqual({ rule: 'brand-senders', carriers: ['one-nz'] });
    expect(decide(m('+64211234567'))).toEqual({ rule: 'nz-mobile', carriers: ['spark', 'one-nz'] });
  });

  it('reads a destination written with spaces as its digits', () => {
    expect(decide(m('+64 22 123 4567')).rule).toBe('nz-mobile');
  });

  it('falls back to the default route', () => {
    expect(decide(m('+819012345678'))).toEqual({ rule: 'default', carriers: ['telstra', 'spark'] });
  });

  it('splits by weight, the other carrier as failover, the same pick for the same message', () => {
    const picks = Array.from({ length: 4000 }, (_, i) => decide(m('+61412345678', '', `message-${i}`)).carriers);
    const telstra = picks.filter((p) => p[0] === 'telstra').length / picks.length;
    expect(telstra).toBeGreaterThan(0.7);
    expect(telstra).toBeLessThan(0.8);
    expect(picks.every((p) => p.length === 2 && new Set(p).size === 2)).toBe(true);
    expect(decide(m('+61412345678', '', 'message-7'))).toEqual(decide(m('+61412345678', '', 'message-7')));
  });
});
