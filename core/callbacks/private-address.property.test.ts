import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isPrivateAddress } from './callback-url';

/** An IPv4 address in one of the ranges a callback must never reach. */
const privateV4 = fc.oneof(
  fc.tuple(fc.constant(127), fc.nat(255), fc.nat(255), fc.nat(255)),
  fc.tuple(fc.constant(10), fc.nat(255), fc.nat(255), fc.nat(255)),
  fc.tuple(fc.constant(172), fc.integer({ min: 16, max: 31 }), fc.nat(255), fc.nat(255)),
  fc.tuple(fc.constant(192), fc.constant(168), fc.nat(255), fc.nat(255)),
  fc.tuple(fc.constant(169), fc.constant(254), fc.nat(255), fc.nat(255)),
  fc.tuple(fc.constant(100), fc.integer({ min: 64, max: 127 }), fc.nat(255), fc.nat(255)),
  fc.tuple(fc.constant(0), fc.nat(255), fc.nat(255), fc.nat(255)),
  fc.tuple(fc.constant(198), fc.integer({ min: 18, max: 19 }), fc.nat(255), fc.nat(255)),
);
const hex = (n: number) => n.toString(16);

/** Every way an IPv6 address can carry that IPv4 address, as URL parsers and DNS answers write them. */
const embeddings = ([a, b, c, d]: number[]): string[] => {
  const hi = hex((a! << 8) | b!);
  const lo = hex((c! << 8) | d!);
  const dotted = `${a}.${b}.${c}.${d}`;
  return [
    `::ffff:${dotted}`, // IPv4-mapped, dotted
    `::ffff:${hi}:${lo}`, // IPv4-mapped as WHATWG URL writes it
    `0:0:0:0:0:ffff:${hi}:${lo}`,
    `0000:0000:0000:0000:0000:FFFF:${dotted}`,
    `::${dotted}`, // IPv4-compatible (deprecated)
    `::ffff:0:${dotted}`, // IPv4-translated (SIIT)
    `::ffff:0:${hi}:${lo}`,
    `64:ff9b::${hi}:${lo}`, // NAT64
    `64:ff9b::${dotted}`,
    `2002:${hi}:${lo}::1`, // 6to4
  ];
};

describe('private addresses, however IPv6 writes them', () => {
  it('are private in every IPv6 form that carries a private IPv4 address', () => {
    fc.assert(
      fc.property(privateV4, (v4) => {
        for (const address of embeddings(v4)) expect(isPrivateAddress(address), address).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('leave a public IPv4 address public in the mapped form, as its own address is', () => {
    for (const v4 of [
      [8, 8, 8, 8],
      [93, 184, 216, 34],
      [1, 1, 1, 1],
    ]) {
      expect(isPrivateAddress(v4.join('.'))).toBe(false);
      expect(isPrivateAddress(`::ffff:${v4.join('.')}`)).toBe(false);
      expect(isPrivateAddress(`::ffff:${hex((v4[0]! << 8) | v4[1]!)}:${hex((v4[2]! << 8) | v4[3]!)}`)).toBe(false);
    }
  });

  it('are the ones the trial reached loopback with, and the IPv6 ranges that route nowhere public', () => {
    for (const a of ['::ffff:7f00:1', '0:0:0:0:0:ffff:7f00:1', '::ffff:a9fe:a9fe', 'fec0::1', '100::1', '2001:db8::1', '2001::1', '64:ff9b:1::1', 'ff02::1'])
      expect(isPrivateAddress(a), a).toBe(true);
    for (const a of ['2606:4700::1111', '2a00:1450:4001:81c::200e', '2404:6800:4006:80b::200e']) expect(isPrivateAddress(a), a).toBe(false);
  });
});
