import { describe, expect, it } from 'vitest';
import { MALLOC_DEFAULTS, mallocEnv } from './malloc-env';

describe('the malloc settings hermod start gives its processes', () => {
  it('gives every glibc setting when the operator set none', () => {
    expect(mallocEnv({ PATH: '/usr/bin' })).toEqual(MALLOC_DEFAULTS);
  });

  it("keeps the operator's own value of a setting, and gives the others", () => {
    const env = mallocEnv({ MALLOC_ARENA_MAX: '8' });
    expect(env).not.toHaveProperty('MALLOC_ARENA_MAX');
    expect(env).toMatchObject({ MALLOC_MMAP_THRESHOLD_: '131072', MALLOC_TRIM_THRESHOLD_: '131072' });
  });
});
