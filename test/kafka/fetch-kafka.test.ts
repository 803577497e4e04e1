import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { KAFKA_VERSIONS } from '../support/kafka-cluster';

const SCRIPT = path.resolve(import.meta.dirname, 'fetch-kafka.sh');

describe('test/kafka/fetch-kafka.sh', () => {
  let cache: string | undefined;
  afterEach(() => {
    if (cache) fs.rmSync(cache, { recursive: true, force: true });
  });

  it('fetches the newest Kafka the tests run when no version is named', () => {
    // A cache that holds the newest release already: the script only says where its jars are.
    cache = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-kafka-cache-'));
    const newest = KAFKA_VERSIONS.at(-1)!;
    fs.mkdirSync(path.join(cache, `kafka-${newest}`, 'jars'), { recursive: true });
    fs.writeFileSync(path.join(cache, `kafka-${newest}`, 'complete'), '');
    const run = spawnSync('bash', [SCRIPT], { encoding: 'utf8', env: { ...process.env, HERMOD_KAFKA_CACHE: cache } });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout.trim()).toBe(path.join(cache, `kafka-${newest}`, 'jars'));
  });
});
