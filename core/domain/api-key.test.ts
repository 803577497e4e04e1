import { describe, expect, it } from 'vitest';
import { newApiKey } from './api-key';

describe('API keys', () => {
  it('are a hmd_ prefix and 32 base64url characters, never the same twice', () => {
    const keys = Array.from({ length: 1000 }, () => newApiKey());
    for (const key of keys) expect(key).toMatch(/^hmd_[A-Za-z0-9_-]{32}$/);
    expect(new Set(keys).size).toBe(keys.length);
  });
});
