import { describe, expect, it } from 'vitest';
import { countSegments } from './segments';

describe('countSegments', () => {
  it('counts decomposed text (NFD) as the SMS it is sent in, its composed form', () => {
    const composed = `${'x'.repeat(151)} Renée`;
    expect(countSegments(composed.normalize('NFD'))).toBe(1);
    expect(countSegments('Kia ora, e hoa mā — tēnā koe'.repeat(3).normalize('NFD'))).toBe(2);
  });
});
