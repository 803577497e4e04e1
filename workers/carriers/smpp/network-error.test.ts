import { describe, expect, it } from 'vitest';
import { networkErrorMeaning } from './network-error';

describe('network error codes of delivery receipts', () => {
  it('say in words what a GSM code means: unknown and absent subscriber, system failure', () => {
    expect(networkErrorMeaning(3, 1)).toBe('unknown subscriber');
    expect(networkErrorMeaning(3, 27)).toBe('absent subscriber');
    expect(networkErrorMeaning(3, 34)).toBe('system failure');
  });

  it('say nothing of a code they do not know, or of another network type’s codes', () => {
    expect(networkErrorMeaning(3, 999)).toBeUndefined();
    expect(networkErrorMeaning(8, 1)).toBeUndefined(); // message center specific
    expect(networkErrorMeaning(1, 27)).toBeUndefined(); // ANSI-136
  });
});
