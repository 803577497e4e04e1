import { describe, expect, it } from 'vitest';
import { roleUsageProblem } from '../bin/cli/role-usage-problem';

describe("what is wrong with a command line that runs one of hermod's roles", () => {
  it('asks a worker for its channels, naming them, instead of running an SMS worker', () => {
    expect(roleUsageProblem('worker', [])).toBe('hermod worker needs --channel <name>[,<name>...]; channels: sms, email, wab, rcs, mms');
    expect(roleUsageProblem('worker', ['--channel'])).toBe('--channel needs a value: --channel <name>[,<name>...]');
  });

  it('names a channel it does not know, and the channels it does', () => {
    expect(roleUsageProblem('worker', ['--channel', 'whatsapp'])).toBe('unknown channel "whatsapp"; channels: sms, email, wab, rcs, mms');
    expect(roleUsageProblem('worker', ['--channel=email,pēpa'])).toBe('unknown channel "pēpa"; channels: sms, email, wab, rcs, mms');
    expect(roleUsageProblem('worker', ['--channel', ''])).toBe('unknown channel ""; channels: sms, email, wab, rcs, mms');
  });

  it('refuses an option a role does not take', () => {
    expect(roleUsageProblem('worker', ['--channel', 'sms', '--chanel', 'email'])).toBe(
      'unknown option --chanel for "worker" (it takes --channel <name>[,<name>...])',
    );
    expect(roleUsageProblem('start', ['--gateways', '2'])).toBe('unknown option --gateways: "start" takes no options');
    for (const role of ['gateway', 'core', 'smsc-simulator', 'channel-simulators', 'console', 'grpc-certs']) {
      expect(roleUsageProblem(role, ['--port', '23001']), role).toBe(`unknown option --port: ${JSON.stringify(role)} takes no options`);
    }
    expect(roleUsageProblem('reply', ['+6421000001', '4000', 'Kia ora', '--port', '23001'])).toBe(
      'unknown option --port for "reply" (it takes --carrier <name>, --whatsapp)',
    );
    expect(roleUsageProblem('reply', ['+6421000001', '4000', 'Kia ora', '--carrier', 'spark'])).toBeUndefined();
  });

  it('refuses an argument start or a role has no place for, instead of starting as if it were not there', () => {
    expect(roleUsageProblem('start', ['extra'])).toBe('unexpected argument "extra": "start" takes none');
    expect(roleUsageProblem('worker', ['--channel', 'sms', 'ēmēra'])).toBe('unexpected argument "ēmēra": "worker" takes none');
    for (const role of ['gateway', 'core', 'smsc-simulator', 'channel-simulators', 'console']) {
      expect(roleUsageProblem(role, ['kāinga', '二']), role).toBe(`unexpected argument "kāinga": ${JSON.stringify(role)} takes none`);
    }
  });

  it('finds nothing wrong with the command lines README shows', () => {
    expect(roleUsageProblem('worker', ['--channel', 'sms'])).toBeUndefined();
    expect(roleUsageProblem('worker', ['--channel', 'email,wab'])).toBeUndefined();
    expect(roleUsageProblem('worker', ['--channel=rcs'])).toBeUndefined();
    expect(roleUsageProblem('start', [])).toBeUndefined();
    expect(roleUsageProblem('reply', ['+6421999001', '4000', 'Kia ora — 商店 --> STOP'])).toBeUndefined();
    expect(roleUsageProblem('grpc-certs', ['/tmp/certs', 'core.hermod.internal', '127.0.0.1'])).toBeUndefined();
  });
});
