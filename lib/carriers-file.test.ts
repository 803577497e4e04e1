import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseCarriersFile } from './carriers-file';
import { ConfigError, resolveConfig } from './config';

const TWO_CARRIERS = `
carriers:
  - name: spark
    host: localhost
    port: 2776
    system_id: hermod
    password_env: SPARK_SMPP_PASSWORD
    binds: 2
    window: 32
    max_submits_per_second: 100
    source_ton: 5
    source_npi: 0
    enquire_link: 15s
    receipt_id: decimal
  - name: one-nz
    host: localhost
    port: 2777
    password: muna
routes:
  - name: nz-spark
    match: { prefix: ['+64 21', '+6422'], source: alphanumeric }
    failover: [spark, one-nz]
  - name: split-au
    match: { prefix: '+61', channel: sms }
    split: { spark: 70, one-nz: 30 }
default_route:
  carrier: one-nz
`;

const parse = (text: string, env: Record<string, string> = { SPARK_SMPP_PASSWORD: 'hūna' }) => parseCarriersFile(text, 'carriers.yaml', env);
const errorOf = (text: string, env?: Record<string, string>): string => {
  try {
    parse(text, env);
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('the file was accepted');
};

describe('the carriers file', () => {
  it('reads carriers with their limits, routes in order and the default route', () => {
    const c = parse(TWO_CARRIERS);
    expect(c.carriers.map((x) => x.name)).toEqual(['spark', 'one-nz']);
    expect(c.carriers[0]).toMatchObject({
      host: 'localhost',
      port: 2776,
      password: 'hūna',
      binds: 2,
      windowSize: 32,
      maxSubmitsPerSecond: 100,
      sourceTon: 5,
      sourceNpi: 0,
      enquireLinkMs: 15_000,
      submitIds: 'hex',
      receiptIds: 'decimal',
    });
    expect(c.carriers[1]).toMatchObject({ binds: 1, windowSize: 64, maxSubmitsPerSecond: 0, sourceTon: undefined, password: 'muna', simulated: undefined });
    expect(c.carriers.map((x) => x.bindMode)).toEqual(['transceiver', 'transceiver']);
    expect(parse(TWO_CARRIERS.replace('    binds: 2', '    binds: 2\n    bind_mode: transmitter_receiver')).carriers[0]!.bindMode).toBe('transmitter_receiver');
    expect(c.rules).toEqual([
      {
        name: 'nz-spark',
        prefixes: ['+6421', '+6422'],
        applications: [],
        channels: [],
        source: 'alphanumeric',
        target: { kind: 'failover', carriers: ['spark', 'one-nz'] },
      },
      {
        name: 'split-au',
        prefixes: ['+61'],
        applications: [],
        channels: ['sms'],
        source: undefined,
        target: { kind: 'split', carriers: ['spark', 'one-nz'], weights: [70, 30] },
      },
    ]);
    expect(c.defaultTarget).toEqual({ kind: 'carrier', carriers: ['one-nz'] });
    expect(Object.isFrozen(c.carriers[0])).toBe(true);
  });

  it.each([
    [TWO_CARRIERS.replace('port: 2777', 'port: 70000'), 'carriers.yaml:17: carriers.one-nz.port: must be a whole number from 1 to 65535, got 70000'],
    [
      TWO_CARRIERS.replace('failover: [spark, one-nz]', 'failover: [spark, vodafone]'),
      'carriers.yaml:22: routes.nz-spark.failover[1]: no carrier is named "vodafone"',
    ],
    [TWO_CARRIERS.replace("'+6422'", "'6422x'"), 'carriers.yaml:21: routes.nz-spark.match.prefix: "6422x" is not an E.164 prefix'],
    [TWO_CARRIERS.replace('    window: 32', '    windw: 32'), 'carriers.yaml:9: carriers.spark.windw: unknown field'],
    [
      TWO_CARRIERS.replace('    binds: 2', '    binds: 2\n    bind_mode: receiver'),
      'carriers.yaml:9: carriers.spark.bind_mode: must be one of transceiver, transmitter_receiver, got "receiver"',
    ],
    [TWO_CARRIERS.replace('receipt_id: decimal', 'receipt_id: octal'), 'carriers.yaml:14: carriers.spark.receipt_id: must be one of hex, decimal, got "octal"'],
    [TWO_CARRIERS.replace('enquire_link: 15s', 'enquire_link: soon'), 'carriers.yaml:13: carriers.spark.enquire_link: not a duration'],
    [
      TWO_CARRIERS.replace('enquire_link: 15s', 'enquire_link: 15'),
      'carriers.yaml:13: carriers.spark.enquire_link: "15" has no unit: write it with ms, s, m, h or d (15s, 15ms…)',
    ],
    [TWO_CARRIERS.replace('default_route:\n  carrier: one-nz\n', ''), 'default_route: required when there is more than one carrier'],
    [
      TWO_CARRIERS.replace('    failover: [spark, one-nz]', '    carrier: spark\n    failover: [spark, one-nz]'),
      'carriers.yaml:20: routes.nz-spark: give exactly one of carrier, failover or split',
    ],
    [TWO_CARRIERS.replace('  - name: one-nz', '  - name: spark'), 'carriers.yaml:15: carriers.spark.name: another carrier has this name'],
    ['carriers: [ {name: a', 'carriers.yaml:1: not valid YAML'],
  ])('refuses a mistake with its line and field (%#)', (text, message) => {
    expect(errorOf(text)).toContain(message);
  });

  it('names the unset variable a password_env points at, and never prints a password', () => {
    expect(errorOf(TWO_CARRIERS, {})).toContain('carriers.yaml:7: carriers.spark.password_env: the environment variable SPARK_SMPP_PASSWORD is not set');
    expect(errorOf(TWO_CARRIERS.replace('password: muna', 'password: muna-toolong'))).not.toContain('muna-toolong');
  });

  it('reads simulated carriers with their own outcome mix and rate', () => {
    const c = parse(
      `carriers:\n  - {name: sim, host: localhost, port: 2790, simulated: {outcomes: {delivered: 9, undeliverable: 1}, rate: 50, receipt_delay: 20ms}}\n`,
    );
    expect(c.carriers[0]!.simulated).toEqual({ outcomes: { delivered: 9, undeliverable: 1, expired: 0, rejected: 0 }, rate: 50, receiptDelayMs: 20 });
    expect(c.defaultTarget).toEqual({ kind: 'carrier', carriers: ['sim'] });
  });

  it('reads a ported-numbers CSV beside the file and refuses a row naming an unknown carrier with its line', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-carriers-'));
    fs.writeFileSync(path.join(dir, 'ported.csv'), 'number,carrier\n+64 21 555 0001,one-nz\n\n+64215550002,spark\n');
    const file = path.join(dir, 'carriers.yaml');
    fs.writeFileSync(file, `${TWO_CARRIERS}ported_numbers: ported.csv\n`);
    const c = resolveConfig({ HERMOD_CARRIERS_FILE: file, SPARK_SMPP_PASSWORD: 'x' }).carriers;
    expect([...c.ported]).toEqual([
      ['+64215550001', 'one-nz'],
      ['+64215550002', 'spark'],
    ]);
    fs.appendFileSync(path.join(dir, 'ported.csv'), '+64215550003,2degrees\n');
    expect(() => resolveConfig({ HERMOD_CARRIERS_FILE: file, SPARK_SMPP_PASSWORD: 'x' })).toThrow(/ported\.csv:5: no carrier is named "2degrees"/);
  });

  it('reads a carrier’s country code, by which handsets it gives in their national format are read, and refuses one that is none', () => {
    expect(parse(TWO_CARRIERS.replace('    binds: 2', '    binds: 2\n    country_code: 64')).carriers[0]!.countryCode).toBe('64');
    expect(parse(TWO_CARRIERS.replace('    binds: 2', "    binds: 2\n    country_code: '+64'")).carriers[0]!.countryCode).toBe('64');
    expect(parse(TWO_CARRIERS).carriers.map((c) => c.countryCode)).toEqual([undefined, undefined]);
    for (const bad of ['NZ', "'0064'", '6400', "''"])
      expect(errorOf(TWO_CARRIERS.replace('    binds: 2', `    binds: 2\n    country_code: ${bad}`))).toMatch(
        /carriers\.yaml:\d+: carriers\.spark\.country_code: .*country calling code/,
      );
  });

  it('takes the country code of the one carrier of the HERMOD_SMPP_* variables from HERMOD_SMPP_COUNTRY_CODE', () => {
    expect(resolveConfig({ HERMOD_SMPP_COUNTRY_CODE: '+44' }).carriers.carriers[0]!.countryCode).toBe('44');
    expect(resolveConfig({}).carriers.carriers[0]!.countryCode).toBeUndefined();
    expect(() => resolveConfig({ HERMOD_SMPP_COUNTRY_CODE: 'GB' })).toThrow(/HERMOD_SMPP_COUNTRY_CODE.*country calling code/);
  });

  it('is refused as a configuration error naming the variable when it cannot be read', () => {
    expect(() => resolveConfig({ HERMOD_CARRIERS_FILE: '/nonexistent/carriers.yaml' })).toThrow(ConfigError);
    expect(() => resolveConfig({ HERMOD_CARRIERS_FILE: '/nonexistent/carriers.yaml' })).toThrow(/HERMOD_CARRIERS_FILE.*ENOENT/);
  });

  it('without a file, the HERMOD_SMPP_* variables become one carrier named smpp that every message goes to', () => {
    const c = resolveConfig({ HERMOD_SMPP_HOST: 'localhost', HERMOD_SMPP_PORT: '2900', HERMOD_SMPP_WINDOW: '16', HERMOD_SMPP_PASSWORD: 'pw' }).carriers;
    expect(c.file).toBe('');
    expect(c.carriers).toHaveLength(1);
    expect(c.carriers[0]).toMatchObject({ name: 'smpp', host: 'localhost', port: 2900, windowSize: 16, password: 'pw', binds: 1, maxSubmitsPerSecond: 0 });
    expect(c.rules).toEqual([]);
    expect(c.defaultTarget).toEqual({ kind: 'carrier', carriers: ['smpp'] });
  });
});

describe('the README example carriers file', () => {
  it('is a valid file of two simulated carriers', () => {
    const readme = fs.readFileSync(path.join(import.meta.dirname, '..', 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('### Carriers and routes'));
    const yaml = /```yaml\n([\s\S]*?)```/.exec(section)![1]!;
    const c = parseCarriersFile(yaml, 'README.md', {});
    expect(c.carriers.map((x) => [x.name, x.simulated !== undefined])).toEqual([
      ['spark', true],
      ['one-nz', true],
    ]);
    expect(c.rules.map((r) => r.name)).toEqual(['brand-senders', 'nz-mobile', 'australia']);
  });
});
