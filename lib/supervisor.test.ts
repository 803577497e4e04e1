import { describe, expect, it } from 'vitest';
import { ConfigError, resolveConfig } from './config';
import { createBoundAddresses, workerProcesses } from './supervisor';

const KAFKA = { HERMOD_KAFKA_BROKERS: 'kafka-1:9092' };

describe('hermod start on every combination of bus and hot state', () => {
  it('runs the channel workers inside core with the in-process bus, whichever hot state', () => {
    for (const state of ['memory', 'redis']) expect(workerProcesses(resolveConfig({ HERMOD_BUS: 'memory', HERMOD_STATE: state }))).toEqual([]);
  });

  it('starts a worker process for SMS and one for every other channel together, with a bus between processes and shared hot state', () => {
    for (const bus of ['redis', 'kafka']) {
      expect(workerProcesses(resolveConfig({ HERMOD_BUS: bus, HERMOD_STATE: 'redis', ...KAFKA }))).toEqual([['sms'], ['email', 'wab', 'rcs', 'mms']]);
    }
  });

  it('starts no worker process when core is asked to run the workers', () => {
    for (const bus of ['redis', 'kafka']) {
      for (const state of ['memory', 'redis']) {
        expect(workerProcesses(resolveConfig({ HERMOD_BUS: bus, HERMOD_STATE: state, HERMOD_CORE_RUNS_WORKERS: 'true', ...KAFKA }))).toEqual([]);
      }
    }
  });

  it('refuses a bus between processes with in-process hot state and workers outside core, naming both ways out', () => {
    for (const bus of ['redis', 'kafka']) {
      const config = resolveConfig({ HERMOD_BUS: bus, HERMOD_STATE: 'memory', ...KAFKA });
      expect(() => workerProcesses(config)).toThrow(ConfigError);
      expect(() => workerProcesses(config)).toThrow(new RegExp(`HERMOD_BUS=${bus}.*HERMOD_STATE=redis.*HERMOD_CORE_RUNS_WORKERS=true`));
    }
  });
});

describe('hermod start on port 0: what each process is forked with', () => {
  const zero = resolveConfig({
    HERMOD_HTTPS_PORT: '0',
    HERMOD_HTTP_PORT: '0',
    HERMOD_CORE_ADDRESS: 'localhost:0',
    HERMOD_SMSC_PORT: '0',
    HERMOD_WAB_SIMULATOR_PORT: '0',
  });

  it('gives every process forked after a role said where it listens that address, restarts of the role included', () => {
    const bound = createBoundAddresses(zero);
    expect(bound.env('core', false)).toEqual({});
    bound.record({ smpp: 40001 });
    bound.record({ smtp: 40002, wab: 40003, rcs: 40004, mms: 40005 });
    bound.record({ grpc: 40006 });
    const expected = {
      HERMOD_SMSC_PORT: '40001',
      HERMOD_SMTP_SINK_PORT: '40002',
      HERMOD_WAB_SIMULATOR_PORT: '40003',
      HERMOD_RCS_SIMULATOR_PORT: '40004',
      HERMOD_MMS_SIMULATOR_PORT: '40005',
      HERMOD_CORE_ADDRESS: 'localhost:40006',
    };
    expect(bound.env('worker', false)).toEqual(expected);
    expect(bound.env('core', false)).toEqual(expected);
    expect(bound.env('gateway', false)).toEqual(expected);
    expect(bound.coreAddress()).toBe('localhost:40006');
  });

  it('has a gateway that joins running ones ask for the ports they asked for, and only when none runs for the ports they got', () => {
    const bound = createBoundAddresses(zero);
    bound.record({ grpc: 40006 });
    expect(bound.env('gateway', false)).not.toHaveProperty('HERMOD_HTTPS_PORT');
    bound.record({ https: 40007, http: 40008 });
    // Core, restarted, takes its short-link base from the real HTTPS port.
    expect(bound.env('core', true)).toMatchObject({ HERMOD_HTTPS_PORT: '40007', HERMOD_HTTP_PORT: '40008' });
    // Port 0 again while gateways that asked for 0 are running: the cluster hands it their port.
    expect(bound.env('gateway', true)).not.toHaveProperty('HERMOD_HTTPS_PORT');
    // Every gateway gone: the cluster's shared port went with them, so the next ones ask for it by number.
    expect(bound.env('gateway', false)).toMatchObject({ HERMOD_HTTPS_PORT: '40007', HERMOD_HTTP_PORT: '40008' });
    expect(bound.env('gateway', true)).toMatchObject({ HERMOD_HTTPS_PORT: '40007', HERMOD_HTTP_PORT: '40008' });
  });
});
