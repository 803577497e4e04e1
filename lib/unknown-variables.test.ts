import { describe, expect, it } from 'vitest';
import { resolveConfig } from './config';
import { recordingEnv, unknownHermodVariables } from './unknown-variables';

const unknownIn = (vars: Record<string, string>) => {
  const { env, read } = recordingEnv(vars);
  resolveConfig(env);
  return unknownHermodVariables(vars, read);
};

describe('unknownHermodVariables', () => {
  it('names a misspelt setting with the one it is most likely a slip for', () => {
    expect(unknownIn({ HERMOD_SMSC_OUTCOMS: 'rejected=1', HERMOD_REDIS_ULR: 'redis://cache:6379' })).toEqual([
      { name: 'HERMOD_REDIS_ULR', didYouMean: 'HERMOD_REDIS_URL' },
      { name: 'HERMOD_SMSC_OUTCOMS', didYouMean: 'HERMOD_SMSC_OUTCOMES' },
    ]);
  });

  it('names a variable far from every setting without a guess', () => {
    expect(unknownIn({ HERMOD_KIA_ORA: 'e hoa mā' })).toEqual([{ name: 'HERMOD_KIA_ORA' }]);
  });

  it('knows every setting the configuration reads, those read only beside another included, and ignores other variables', () => {
    expect(
      unknownIn({
        HERMOD_STATE: 'redis',
        HERMOD_BUS: 'redis',
        HERMOD_CORE_RUNS_WORKERS: 'true',
        HERMOD_BOOTSTRAP_APP: 'acme',
        HERMOD_BOOTSTRAP_PASSWORD: 'pā💥',
        HERMOD_SMPP_WINDOW: '16',
        HERMOD_ROLE: 'core',
        PATH: '/usr/bin',
        NODE_OPTIONS: '--max-old-space-size=512',
      }),
    ).toEqual([]);
  });
});
