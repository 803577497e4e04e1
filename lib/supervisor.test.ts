import { describe, expect, it } from 'vitest';
import { ConfigError, resolveConfig } from './config';
import { workerChannels } from './supervisor';

const KAFKA = { HERMOD_KAFKA_BROKERS: 'kafka-1:9092' };

describe('hermod start on every combination of bus and hot state', () => {
  it('runs the channel workers inside core with the in-process bus, whichever hot state', () => {
    for (const state of ['memory', 'redis']) expect(workerChannels(resolveConfig({ HERMOD_BUS: 'memory', HERMOD_STATE: state }))).toEqual([]);
  });

  it('starts one worker process per channel with a bus between processes and shared hot state', () => {
    for (const bus of ['redis', 'kafka']) {
      expect(workerChannels(resolveConfig({ HERMOD_BUS: bus, HERMOD_STATE: 'redis', ...KAFKA }))).toEqual(['sms', 'email', 'wab', 'rcs', 'mms']);
    }
  });

  it('starts no worker process when core is asked to run the workers', () => {
    for (const bus of ['redis', 'kafka']) {
      for (const state of ['memory', 'redis']) {
        expect(workerChannels(resolveConfig({ HERMOD_BUS: bus, HERMOD_STATE: state, HERMOD_CORE_RUNS_WORKERS: 'true', ...KAFKA }))).toEqual([]);
      }
    }
  });

  it('refuses a bus between processes with in-process hot state and workers outside core, naming both ways out', () => {
    for (const bus of ['redis', 'kafka']) {
      const config = resolveConfig({ HERMOD_BUS: bus, HERMOD_STATE: 'memory', ...KAFKA });
      expect(() => workerChannels(config)).toThrow(ConfigError);
      expect(() => workerChannels(config)).toThrow(new RegExp(`HERMOD_BUS=${bus}.*HERMOD_STATE=redis.*HERMOD_CORE_RUNS_WORKERS=true`));
    }
  });
});
