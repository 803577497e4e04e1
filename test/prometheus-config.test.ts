import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { prometheusTool, promtool } from './support/prometheus-process';

const DIR = path.resolve(import.meta.dirname, '../deploy/prometheus');
const tool = prometheusTool('promtool');

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
    expect(run.output).toContain('SUCCESS: 10 rules found');
    expect(run.code).toBe(0);
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
    expect(run.output).toContain('SUCCESS: 10 rules found');
    expect(run.code).toBe(0);
  });
});
