import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfigError, parseRedisClusterUrl, resolveConfig } from './config';

describe('Redis Cluster configuration', () => {
  it('reads the seed nodes of HERMOD_REDIS_URL as a cluster when HERMOD_REDIS_CLUSTER is true', () => {
    const a = resolveConfig({
      HERMOD_STATE: 'redis',
      HERMOD_REDIS_CLUSTER: 'true',
      HERMOD_REDIS_URL: 'redis://redis-0.redis:7000,redis-1.redis:7001,10.0.0.3',
    }).adapters;
    expect(a.redisCluster).toEqual({
      nodes: [
        { host: 'redis-0.redis', port: 7000 },
        { host: 'redis-1.redis', port: 7001 },
        { host: '10.0.0.3', port: 6379 },
      ],
      username: '',
      password: '',
      tls: false,
    });
    // On a cluster a write counts once the shard's replica has it; one Redis has no replica to wait for.
    expect(a.redisWaitReplicas).toBe(1);
    expect(a.redisWaitTimeoutMs).toBe(1000);
    expect(resolveConfig({ HERMOD_STATE: 'redis' }).adapters).toMatchObject({ redisCluster: undefined, redisWaitReplicas: 0 });
  });

  it('takes TLS, credentials with any characters, IPv6 nodes and database 0 from the URL', () => {
    expect(parseRedisClusterUrl('rediss://hermod:p%40ss%3Aw%C3%B6rd@[::1]:7000,[fd00::2]:7001/0')).toEqual({
      nodes: [
        { host: '::1', port: 7000 },
        { host: 'fd00::2', port: 7001 },
      ],
      username: 'hermod',
      password: 'p@ss:wörd',
      tls: true,
    });
    expect(parseRedisClusterUrl('redis://:secret@localhost:7000/')).toMatchObject({ username: '', password: 'secret' });
  });

  it('refuses a URL that names no cluster, with the variable and without the password', () => {
    const refuse = (url: string): string => {
      try {
        resolveConfig({ HERMOD_REDIS_CLUSTER: 'true', HERMOD_REDIS_URL: url });
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        return (err as Error).message;
      }
      throw new Error(`${url} was accepted`);
    };
    expect(refuse('http://localhost:7000')).toMatch(/HERMOD_REDIS_URL.*redis:\/\/ or rediss:\/\//);
    expect(refuse('redis://localhost:7000/1')).toMatch(/only database 0/);
    expect(refuse('redis://localhost:7000,,localhost:7001')).toMatch(/"" is not host:port/);
    expect(refuse('redis://localhost:70000')).toMatch(/port 70000 is out of range/);
    const withPassword = refuse('redis://user:hunter2@localhost:7000/3');
    expect(withPassword).not.toContain('hunter2');
    expect(withPassword).toContain('user:***@');
    expect(() => resolveConfig({ HERMOD_REDIS_CLUSTER: 'maybe' })).toThrow(/HERMOD_REDIS_CLUSTER must be true or false/);
  });

  it('refuses the Redis Streams bus on a cluster, naming what to use instead', () => {
    expect(() => resolveConfig({ HERMOD_BUS: 'redis', HERMOD_REDIS_CLUSTER: 'true', HERMOD_REDIS_URL: 'redis://localhost:7000' })).toThrow(
      /HERMOD_BUS=redis does not run on a Redis Cluster.*HERMOD_BUS=kafka/,
    );
    expect(
      resolveConfig({
        HERMOD_BUS: 'kafka',
        HERMOD_KAFKA_BROKERS: 'kafka:9092',
        HERMOD_STATE: 'redis',
        HERMOD_REDIS_CLUSTER: 'true',
        HERMOD_REDIS_URL: 'redis://localhost:7000',
      }).adapters.redisCluster,
    ).toBeDefined();
  });

  it('bounds the replica wait: a count from 0 to 16, and a timeout of at least 1 ms (Redis waits forever on 0)', () => {
    const cluster = { HERMOD_REDIS_CLUSTER: 'true', HERMOD_REDIS_URL: 'redis://localhost:7000' };
    expect(resolveConfig({ ...cluster, HERMOD_REDIS_WAIT_REPLICAS: '0' }).adapters.redisWaitReplicas).toBe(0);
    expect(resolveConfig({ ...cluster, HERMOD_REDIS_WAIT_REPLICAS: '2', HERMOD_REDIS_WAIT_TIMEOUT: '250ms' }).adapters).toMatchObject({
      redisWaitReplicas: 2,
      redisWaitTimeoutMs: 250,
    });
    expect(() => resolveConfig({ ...cluster, HERMOD_REDIS_WAIT_REPLICAS: '17' })).toThrow(/HERMOD_REDIS_WAIT_REPLICAS/);
    expect(() => resolveConfig({ ...cluster, HERMOD_REDIS_WAIT_TIMEOUT: '0ms' })).toThrow(/HERMOD_REDIS_WAIT_TIMEOUT must be at least 1ms/);
    expect(() => resolveConfig({ ...cluster, HERMOD_REDIS_WAIT_TIMEOUT: 'soon' })).toThrow(/HERMOD_REDIS_WAIT_TIMEOUT/);
  });

  it('reads back any list of nodes and credentials it is given', () => {
    const label = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?$/);
    const host = fc.oneof(
      fc.array(label, { minLength: 1, maxLength: 4 }).map((parts) => parts.join('.')),
      fc.ipV4(),
      fc.ipV6().map((ip) => `[${ip}]`),
    );
    const node = fc.record({ host, port: fc.integer({ min: 1, max: 65535 }) });
    const secret = fc.string({ unit: 'grapheme', maxLength: 20 });
    fc.assert(
      fc.property(fc.array(node, { minLength: 1, maxLength: 6 }), secret, secret, fc.boolean(), (nodes, username, password, tls) => {
        const userinfo = username || password ? `${encodeURIComponent(username)}:${encodeURIComponent(password)}@` : '';
        const url = `${tls ? 'rediss' : 'redis'}://${userinfo}${nodes.map((n) => `${n.host}:${n.port}`).join(',')}`;
        expect(parseRedisClusterUrl(url)).toEqual({
          nodes: nodes.map((n) => ({ host: n.host.replace(/^\[(.*)\]$/, '$1'), port: n.port })),
          username,
          password,
          tls,
        });
      }),
    );
  });
});
