import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runRefusedStart } from './support/refused-start';
import { freePortBelowEphemeral } from './support/free-port';
import { randomPrefix, REDIS_URL } from './support/redis-keys';
import { makeRoleCertificates } from '../lib/role-certificates';

/** One error line naming `variable`, no stack trace, exit code 2: what an operator's mistake at start gets. */
function expectOneLineConfigError(outcome: Awaited<ReturnType<typeof runRefusedStart>>, variable: RegExp): void {
  expect(outcome.code, outcome.output).toBe(2);
  expect(outcome.errors, outcome.output).toHaveLength(1);
  expect(outcome.errors[0]!.msg).toMatch(/^configuration error: /);
  expect(outcome.errors[0]!.msg).toMatch(variable);
  expect(outcome.output).not.toMatch(/\n\s+at |"stack"/);
}

/** A listener on 127.0.0.1 holding a port, as another program would. */
async function holdPort(): Promise<net.Server & { port: number }> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(server, { port: (server.address() as net.AddressInfo).port });
}

describe('roles started on their own with settings that cannot work', () => {
  let dataDir: string;
  let env: Record<string, string>;

  beforeAll(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-start-mistakes-'));
    env = { HERMOD_DATA_DIR: dataDir, HERMOD_METRICS_PORT: '0', HERMOD_REDIS_URL: REDIS_URL, HERMOD_REDIS_PREFIX: randomPrefix('mistakes') };
  });

  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('refuses core on the Redis bus with in-process hot state and workers outside core, as hermod start does', async () => {
    const outcome = await runRefusedStart(['core'], { ...env, HERMOD_CORE_ADDRESS: '127.0.0.1:0', HERMOD_BUS: 'redis', HERMOD_STATE: 'memory' });
    expectOneLineConfigError(outcome, /HERMOD_BUS=redis.*HERMOD_STATE=redis.*HERMOD_CORE_RUNS_WORKERS=true/);
  });

  it('refuses an SMS worker with in-process hot state, naming HERMOD_STATE', async () => {
    const outcome = await runRefusedStart(['worker', '--channel', 'sms'], { ...env, HERMOD_BUS: 'redis', HERMOD_STATE: 'memory' });
    expectOneLineConfigError(outcome, /HERMOD_STATE=redis/);
  });

  it('refuses a gateway whose certificate file is not there, naming HERMOD_TLS_CERT', async () => {
    const outcome = await runRefusedStart(['gateway'], {
      ...env,
      HERMOD_HTTPS_PORT: '0',
      HERMOD_HTTP_PORT: '0',
      HERMOD_TLS_CERT: path.join(dataDir, 'nope.crt'),
      HERMOD_TLS_KEY: path.join(dataDir, 'nope.key'),
    });
    expectOneLineConfigError(outcome, /HERMOD_TLS_CERT: cannot read .*nope\.crt: no such file/);
  });

  it('refuses core whose gRPC certificate file is not there, naming HERMOD_GRPC_TLS_CERT, once', async () => {
    const certs = await makeRoleCertificates(path.join(dataDir, 'grpc'), 'hermod');
    const outcome = await runRefusedStart(['core'], {
      ...env,
      HERMOD_CORE_ADDRESS: '127.0.0.1:0',
      HERMOD_GRPC_TLS_CERT: path.join(dataDir, 'nope.crt'),
      HERMOD_GRPC_TLS_KEY: certs.keyFile,
      HERMOD_GRPC_TLS_CA: certs.caFile,
    });
    expectOneLineConfigError(outcome, /HERMOD_GRPC_TLS_CERT: cannot read .*nope\.crt: no such file/);
  });

  it('refuses a worker on the in-process bus, naming HERMOD_BUS', async () => {
    const outcome = await runRefusedStart(['worker', '--channel', 'sms'], { ...env, HERMOD_BUS: 'memory', HERMOD_STATE: 'redis' });
    expectOneLineConfigError(outcome, /HERMOD_BUS=redis or HERMOD_BUS=kafka/);
  });

  it('refuses a gateway whose HTTPS port another process holds, naming HERMOD_HTTPS_PORT and the port', async () => {
    const held = await holdPort();
    try {
      const outcome = await runRefusedStart(['gateway'], { ...env, HERMOD_HOST: '127.0.0.1', HERMOD_HTTPS_PORT: String(held.port), HERMOD_HTTP_PORT: '0' });
      expectOneLineConfigError(outcome, new RegExp(`HERMOD_HTTPS_PORT: port ${held.port} on 127.0.0.1 is in use by another process`));
    } finally {
      held.close();
    }
  });

  it('refuses a gateway whose metrics port another process holds before it listens for requests, naming HERMOD_METRICS_PORT', async () => {
    const held = await holdPort();
    try {
      const outcome = await runRefusedStart(['gateway'], {
        ...env,
        HERMOD_HOST: '127.0.0.1',
        HERMOD_HTTPS_PORT: '0',
        HERMOD_HTTP_PORT: '0',
        HERMOD_METRICS_PORT: String(held.port),
      });
      expectOneLineConfigError(outcome, new RegExp(`HERMOD_METRICS_PORT: port ${held.port} on 127.0.0.1 is in use by another process`));
      expect(outcome.output).not.toContain('gateway listening');
    } finally {
      held.close();
    }
  });

  it('refuses core whose gRPC port another process holds, naming HERMOD_CORE_ADDRESS, before it logs in to a carrier or starts a worker (trial: it bound the live SMSC first)', async () => {
    const held = await holdPort();
    const smsc = await holdPort();
    let logins = 0;
    smsc.on('connection', (socket) => {
      logins++;
      socket.destroy();
    });
    try {
      const outcome = await runRefusedStart(['core'], {
        ...env,
        HERMOD_CORE_ADDRESS: `127.0.0.1:${held.port}`,
        HERMOD_SMPP_PORT: String(smsc.port),
        HERMOD_BOUNCE_SMTP_PORT: '0',
      });
      expectOneLineConfigError(outcome, new RegExp(`HERMOD_CORE_ADDRESS: port ${held.port} on 127.0.0.1 is in use by another process`));
      expect(outcome.output).not.toContain('channel worker started');
      expect(logins).toBe(0);
    } finally {
      smsc.close();
      held.close();
    }
  });

  it('refuses the console whose port another process holds, naming HERMOD_ADMIN_PORT', async () => {
    const held = await holdPort();
    try {
      const outcome = await runRefusedStart(['console'], {
        ...env,
        HERMOD_ADMIN_HOST: '127.0.0.1',
        HERMOD_ADMIN_PORT: String(held.port),
        HERMOD_ADMIN_PASSWORD: 'kōrero-🔑',
      });
      expectOneLineConfigError(outcome, new RegExp(`HERMOD_ADMIN_PORT: port ${held.port} on 127.0.0.1 is in use by another process`));
    } finally {
      held.close();
    }
  });

  it('refuses a data directory that cannot be one (under a file), naming HERMOD_DATA_DIR, for the whole service and a role alike', async () => {
    const file = path.join(dataDir, 'kōnae.txt');
    fs.writeFileSync(file, 'he kōnae, ehara i te whaiaronga');
    for (const args of [['start'], ['core']]) {
      const outcome = await runRefusedStart(args, { ...env, HERMOD_DATA_DIR: path.join(file, 'data'), HERMOD_CORE_ADDRESS: '127.0.0.1:0' });
      expectOneLineConfigError(outcome, /HERMOD_DATA_DIR: cannot use .*kōnae\.txt\/data: not a directory/);
    }
  });

  it('warns once about a misspelt setting, naming the one it is a slip for, and starts anyway', async () => {
    const outcome = await runRefusedStart(
      ['smsc-simulator'],
      { ...env, HERMOD_SMSC_HOST: '127.0.0.1', HERMOD_SMSC_PORT: '0', HERMOD_SMSC_OUTCOMS: 'rejected=1' },
      10_000,
    );
    const warnings = outcome.output
      .split('\n')
      .filter((line) => line.includes('is no setting of hermod'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(warnings, outcome.output).toEqual([expect.objectContaining({ level: 'warn', variable: 'HERMOD_SMSC_OUTCOMS', didYouMean: 'HERMOD_SMSC_OUTCOMES' })]);
    expect(outcome.errors).toEqual([]);
  });

  it('refuses the SMSC simulator whose port another process holds, naming HERMOD_SMSC_PORT', async () => {
    const held = await holdPort();
    try {
      const outcome = await runRefusedStart(['smsc-simulator'], { ...env, HERMOD_SMSC_HOST: '127.0.0.1', HERMOD_SMSC_PORT: String(held.port) });
      expectOneLineConfigError(outcome, new RegExp(`HERMOD_SMSC_PORT: port ${held.port} on 127.0.0.1 is in use by another process`));
    } finally {
      held.close();
    }
  });

  it('refuses the channel simulators when a port of theirs is held, naming its variable', async () => {
    for (const variable of ['HERMOD_SMTP_SINK_PORT', 'HERMOD_WAB_SIMULATOR_PORT', 'HERMOD_RCS_SIMULATOR_PORT', 'HERMOD_MMS_SIMULATOR_PORT']) {
      const held = await holdPort();
      try {
        const ports = { HERMOD_SMTP_SINK_PORT: '0', HERMOD_WAB_SIMULATOR_PORT: '0', HERMOD_RCS_SIMULATOR_PORT: '0', HERMOD_MMS_SIMULATOR_PORT: '0' };
        const outcome = await runRefusedStart(['channel-simulators'], { ...env, ...ports, [variable]: String(held.port) });
        expectOneLineConfigError(outcome, new RegExp(`${variable}: port ${held.port} on 127.0.0.1 is in use by another process`));
      } finally {
        held.close();
      }
    }
  });

  it('refuses an e-mail worker whose bounce listener port another process holds, naming HERMOD_BOUNCE_SMTP_PORT, before its SMS workers log in to the SMSC', async () => {
    const held = await holdPort();
    const smsc = await holdPort();
    let logins = 0;
    smsc.on('connection', (socket) => {
      logins++;
      socket.destroy();
    });
    try {
      const outcome = await runRefusedStart(['worker', '--channel', 'sms,email'], {
        ...env,
        HERMOD_BUS: 'redis',
        HERMOD_STATE: 'redis',
        HERMOD_SMPP_PORT: String(smsc.port),
        HERMOD_BOUNCE_SMTP_HOST: '127.0.0.1',
        HERMOD_BOUNCE_SMTP_PORT: String(held.port),
      });
      expectOneLineConfigError(outcome, new RegExp(`HERMOD_BOUNCE_SMTP_PORT: port ${held.port} on 127.0.0.1 is in use by another process`));
      expect(logins).toBe(0);
      // Nor does its e-mail worker join the bus's group first, only to leave it (trial: `channel worker started`, then exit 2).
      expect(outcome.output).not.toMatch(/"msg":"channel worker started"[^\n]*"channel":"email"/);
    } finally {
      smsc.close();
      held.close();
    }
  });

  it('refuses an RCS worker without a service-account key, naming HERMOD_RCS_SERVICE_ACCOUNT, instead of rejecting every RCS send for good (trial)', async () => {
    const outcome = await runRefusedStart(['worker', '--channel', 'email,rcs'], {
      ...env,
      HERMOD_BUS: 'redis',
      HERMOD_STATE: 'redis',
      HERMOD_BOUNCE_SMTP_PORT: '0',
    });
    expectOneLineConfigError(outcome, /an RCS worker needs HERMOD_RCS_SERVICE_ACCOUNT.*`hermod channel-simulators` logs that it wrote/);
  });

  it('refuses the console without a password, naming HERMOD_ADMIN_PASSWORD', async () => {
    const outcome = await runRefusedStart(['console'], { ...env, HERMOD_ADMIN_PORT: '0', HERMOD_ADMIN_PASSWORD: '' });
    expectOneLineConfigError(outcome, /HERMOD_ADMIN_PASSWORD is not set/);
  });
});

describe('hermod start with a port another process holds', () => {
  it('stops with exit code 2 and the gateway’s line naming HERMOD_HTTPS_PORT, not a stack trace', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-start-port-held-'));
    const held = await holdPort();
    try {
      const outcome = await runRefusedStart(['start'], {
        HERMOD_DATA_DIR: dataDir,
        HERMOD_HOST: '127.0.0.1',
        HERMOD_HTTPS_PORT: String(held.port),
        HERMOD_HTTP_PORT: '0',
        HERMOD_METRICS_PORT: '0',
        HERMOD_ADMIN_PORT: '0',
        HERMOD_CORE_ADDRESS: '127.0.0.1:0',
        HERMOD_SMSC_PORT: '0',
        HERMOD_CHANNEL_SIMULATORS: 'false',
        HERMOD_GATEWAYS: '1',
      });
      expect(outcome.code, outcome.output).toBe(2);
      expect(outcome.errors.map((e) => e.msg).join('\n')).toMatch(
        new RegExp(`configuration error: HERMOD_HTTPS_PORT: port ${held.port} on 127.0.0.1 is in use`),
      );
      expect(outcome.output).not.toMatch(/\n\s+at |"stack"/);
    } finally {
      held.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 90_000);

  // The gateway's port, which a role refuses, and the supervisor's own metrics port, which the supervisor does.
  for (const variable of ['HERMOD_HTTPS_PORT', 'HERMOD_METRICS_PORT']) {
    it(`has stopped the roles it had started when it exits for ${variable}, so a start again at once finds their ports free`, async () => {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-start-port-held-'));
      const held = await holdPort();
      const core = await freePortBelowEphemeral();
      const smsc = await freePortBelowEphemeral();
      try {
        const outcome = await runRefusedStart(
          ['start'],
          {
            HERMOD_DATA_DIR: dataDir,
            HERMOD_HOST: '127.0.0.1',
            HERMOD_HTTPS_PORT: '0',
            HERMOD_HTTP_PORT: '0',
            HERMOD_METRICS_PORT: '0',
            [variable]: String(held.port),
            HERMOD_CORE_ADDRESS: `127.0.0.1:${core}`,
            HERMOD_SMSC_PORT: String(smsc),
            HERMOD_CHANNEL_SIMULATORS: 'false',
            HERMOD_GATEWAYS: '1',
          },
          30_000,
          async () => ({ core: await listening(core), smsc: await listening(smsc) }),
        );
        expect(outcome.code, outcome.output).toBe(2);
        expect(outcome.output).toContain(`configuration error: ${variable}: port ${held.port}`);
        expect(outcome.atExit, outcome.output).toEqual({ core: false, smsc: false });
      } finally {
        held.close();
        fs.rmSync(dataDir, { recursive: true, force: true });
      }
    }, 90_000);
  }
});

/** Whether something accepts connections on 127.0.0.1:`port`. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

describe('a role’s command line that cannot be run', () => {
  /** One plain line on standard error, exit code 2, before anything starts or waits. */
  function expectOneUsageLine(outcome: Awaited<ReturnType<typeof runRefusedStart>>, line: string): void {
    expect({ code: outcome.code, output: outcome.output }).toEqual({ code: 2, output: `error: ${line}\n` });
  }

  it('asks a worker without --channel for one, naming the channels, instead of running an SMS worker', async () => {
    // Redis where nothing answers: a worker that started would wait for it, never exit.
    const outcome = await runRefusedStart(
      ['worker'],
      { HERMOD_BUS: 'redis', HERMOD_STATE: 'redis', HERMOD_REDIS_URL: 'redis://127.0.0.1:23917', HERMOD_METRICS_PORT: '0' },
      10_000,
    );
    expectOneUsageLine(outcome, 'hermod worker needs --channel <name>[,<name>...]; channels: sms, email, wab, rcs, mms');
  });

  it('names an option a role does not take instead of starting without it', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-role-option-'));
    try {
      const outcome = await runRefusedStart(
        ['core', '--port', '23001'],
        { HERMOD_DATA_DIR: dataDir, HERMOD_CORE_ADDRESS: '127.0.0.1:0', HERMOD_METRICS_PORT: '0' },
        10_000,
      );
      expectOneUsageLine(outcome, 'unknown option --port: "core" takes no options');
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
