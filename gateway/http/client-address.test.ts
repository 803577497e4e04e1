import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseTrustedProxies, TrustedProxyError } from '../../lib/trusted-proxies';
import { clientAddressOf } from './client-address';

const proxies = parseTrustedProxies(['10.0.0.0/8', '192.168.1.7', 'fd00::/8']);

describe('clientAddressOf', () => {
  it('is the peer when no proxy is trusted, whatever X-Forwarded-For claims', () => {
    expect(clientAddressOf('203.0.113.9', '198.51.100.1', parseTrustedProxies([]))).toBe('203.0.113.9');
    expect(clientAddressOf('::ffff:203.0.113.9', undefined, parseTrustedProxies([]))).toBe('203.0.113.9');
  });

  it('is the address a trusted proxy saw, not what the client wrote before it', () => {
    // The client claimed 127.0.0.1; the load balancer 10.1.2.3 appended the address it saw.
    expect(clientAddressOf('10.1.2.3', '127.0.0.1, 203.0.113.9', proxies)).toBe('203.0.113.9');
    expect(clientAddressOf('::ffff:10.1.2.3', '203.0.113.9', proxies)).toBe('203.0.113.9');
  });

  it('walks back past every trusted proxy in a chain, IPv6 included', () => {
    expect(clientAddressOf('10.1.2.3', '2001:db8::5, 192.168.1.7, fd00::1', proxies)).toBe('2001:db8::5');
  });

  it('stops at a hop that is no address, keeping the last one a trusted proxy vouched for', () => {
    expect(clientAddressOf('10.1.2.3', 'Kia ora 👋🏽, 192.168.1.7', proxies)).toBe('192.168.1.7');
    expect(clientAddressOf('10.1.2.3', 'unknown', proxies)).toBe('10.1.2.3');
  });

  it('never names a trusted proxy as the client when an untrusted address is in the chain to its right', () => {
    const v4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((p) => p.join('.'));
    fc.assert(
      fc.property(v4, fc.array(v4, { maxLength: 6 }), (peer, hops) => {
        const client = clientAddressOf(peer, hops.join(', ') || undefined, proxies);
        if (!proxies.has(peer)) return client === peer;
        // The client is the rightmost untrusted hop, or the leftmost hop when every one is trusted.
        const untrusted = hops.filter((h) => !proxies.has(h));
        return client === (untrusted.length > 0 ? untrusted[untrusted.length - 1] : (hops[0] ?? peer));
      }),
    );
  });
});

describe('parseTrustedProxies', () => {
  it('refuses an entry that is no address or network, naming it', () => {
    for (const bad of ['10.0.0.0/33', 'proxy.example', '10.0.0.1/8/8', 'fd00::/129', ''])
      expect(() => parseTrustedProxies([bad]), bad).toThrow(TrustedProxyError);
    expect(() => parseTrustedProxies(['lb.internal'])).toThrow(/"lb.internal" is not an address or a network/);
  });
});
