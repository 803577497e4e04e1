import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { prometheusTool, promtool } from './support/prometheus-process';

const DIR = path.resolve(import.meta.dirname, '../deploy/prometheus');
const tool = prometheusTool('promtool');
/** Every alert the rules file holds: a configuration that loads it must find them all. */
const RULES = (fs.readFileSync(path.join(DIR, 'hermod-alerts.yml'), 'utf8').match(/^\s*- alert: /gm) ?? []).length;

describe.skipIf(!tool.available)('Prometheus configuration in deploy/prometheus', () => {
  it('passes the alerting rules’ unit tests, one per alert', () => {
    const run = promtool(['test', 'rules', 'hermod-alerts.test.yml'], DIR);
    expect(run.output).toContain('SUCCESS');
    expect(run.code).toBe(0);

    // Every alert has a test group of its own.
    const alerts = (parse(fs.readFileSync(path.join(DIR, 'hermod-alerts.yml'), 'utf8')) as { groups: { rules: { alert: string }[] }[] }).groups.flatMap((g) =>
      g.rules.map((r) => r.alert),
    );
    const tests = parse(fs.readFileSync(path.join(DIR, 'hermod-alerts.test.yml'), 'utf8')) as {
      tests: { alert_rule_test: { alertname: string; exp_alerts: unknown[] }[] }[];
    };
    const firing = new Set(tests.tests.flatMap((t) => t.alert_rule_test.filter((a) => a.exp_alerts.length > 0).map((a) => a.alertname)));
    expect(alerts.filter((a) => !firing.has(a))).toEqual([]);
  });

  it('accepts the compose scrape configuration with its rules', () => {
    const run = promtool(['check', 'config', 'prometheus.yml'], DIR);
    expect(run.output).toContain(`SUCCESS: ${RULES} rules found`);
    expect(run.code).toBe(0);
  });

  it('scrapes every container of each hermod service of compose, however far a service is scaled', () => {
    const compose = parse(fs.readFileSync(path.join(DIR, '../compose.yaml'), 'utf8'), { merge: true }) as {
      services: Record<string, { command?: string[]; environment?: Record<string, string> }>;
    };
    // The services that run a hermod role and so serve metrics (grpc-certs only makes files and exits).
    const roles = Object.entries(compose.services)
      .filter(([, s]) => s.environment?.HERMOD_METRICS_PORT && s.command)
      .map(([name]) => name);
    expect(roles).toEqual(expect.arrayContaining(['core', 'gateway', 'worker-sms', 'smsc']));
    const config = parse(fs.readFileSync(path.join(DIR, 'prometheus.yml'), 'utf8')) as {
      scrape_configs: { dns_sd_configs?: { names: string[]; type: string; port: number }[] }[];
    };
    // A name of a scaled service resolves to every one of its containers (Docker's DNS); a static target would be one of them.
    const discovered = config.scrape_configs.flatMap((j) => j.dns_sd_configs ?? []);
    expect(discovered.every((d) => d.type === 'A' && d.port === 9464)).toBe(true);
    expect(discovered.flatMap((d) => d.names).sort()).toEqual(roles.sort());
  });

  it('accepts the one-machine scrape configuration, which scrapes every metrics port of the README’s one-machine layout', () => {
    const run = promtool(['check', 'config', 'prometheus-one-machine.yml'], DIR);
    expect(run.output).toContain(`SUCCESS: ${RULES} rules found`);
    expect(run.code).toBe(0);

    const readme = fs.readFileSync(path.join(DIR, '../../README.md'), 'utf8');
    const layout = readme.slice(readme.indexOf('Example on one machine'));
    const block = layout.slice(layout.indexOf('```sh'), layout.indexOf('```', layout.indexOf('```sh') + 5));
    // The gateway keeps the default port; every other process names its own.
    const ports = ['9464', ...[...block.matchAll(/HERMOD_METRICS_PORT=(\d+)/g)].map((m) => m[1]!)];
    expect(ports.length).toBeGreaterThanOrEqual(6);
    const config = parse(fs.readFileSync(path.join(DIR, 'prometheus-one-machine.yml'), 'utf8')) as {
      scrape_configs: { static_configs: { targets: string[] }[] }[];
    };
    const targets = config.scrape_configs.flatMap((j) => j.static_configs.flatMap((c) => c.targets));
    expect(targets.sort()).toEqual(ports.map((p) => `127.0.0.1:${p}`).sort());
  });

  it('accepts the Kubernetes scrape configuration', () => {
    let run = promtool(['check', 'config', 'prometheus-kubernetes.yml'], DIR);
    if (/field kubernetes_sd_configs not found/.test(run.output)) {
      // Debian builds Prometheus without Kubernetes discovery: check the rest
      // of the file (relabelling, rules) with the discovery swapped for a static one.
      console.warn('promtool has no Kubernetes discovery (Debian build): checking prometheus-kubernetes.yml with static discovery instead');
      const config = parse(fs.readFileSync(path.join(DIR, 'prometheus-kubernetes.yml'), 'utf8')) as {
        rule_files: string[];
        scrape_configs: Record<string, unknown>[];
      };
      for (const job of config.scrape_configs) {
        expect(job.kubernetes_sd_configs).toEqual([{ role: 'pod' }]);
        delete job.kubernetes_sd_configs;
        job.static_configs = [{ targets: ['hermod:9464'] }];
      }
      config.rule_files = config.rule_files.map((f) => path.join(DIR, f));
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-promtool-'));
      fs.writeFileSync(path.join(dir, 'prometheus-kubernetes.yml'), stringify(config));
      run = promtool(['check', 'config', 'prometheus-kubernetes.yml'], dir);
      fs.rmSync(dir, { recursive: true, force: true });
    }
    expect(run.output).toContain(`SUCCESS: ${RULES} rules found`);
    expect(run.code).toBe(0);
  });
});
