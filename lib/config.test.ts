import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { ConfigError, resolveConfig } from './config';

describe('configuration', () => {
  it('runs on embedded defaults when nothing is set', () => {
    const c = resolveConfig({});
    expect(c).toMatchObject({ httpsPort: 8443, httpPort: 8080, metricsPort: 9464, bootstrap: undefined });
    expect(c.adapters).toMatchObject({ bus: 'memory', state: 'memory', history: 'chdb', coreRunsWorkers: true });
    expect(c.simulator).toMatchObject({
      enabled: true,
      port: 2775,
      receiptDelayMs: 200,
      outcomes: { delivered: 1, undeliverable: 0, expired: 0, rejected: 0 },
    });
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('serves metrics to anyone unless HERMOD_METRICS_TOKEN names a bearer token, and refuses a token no header can carry', () => {
    expect(resolveConfig({}).metricsToken).toBe('');
    expect(resolveConfig({ HERMOD_METRICS_TOKEN: 'q3Zb+Xw/9k_~.-Lm==' }).metricsToken).toBe('q3Zb+Xw/9k_~.-Lm==');
    for (const token of ['tohu-ā', 'has space', '🔑', 'a=b']) {
      expect(() => resolveConfig({ HERMOD_METRICS_TOKEN: token })).toThrow(/HERMOD_METRICS_TOKEN must be a bearer token/);
    }
  });

  it('serves the operator console on 127.0.0.1:9465 as admin, and only once a password is set', () => {
    expect(resolveConfig({}).admin).toEqual({ host: '127.0.0.1', port: 9465, user: 'admin', password: '' });
    expect(
      resolveConfig({ HERMOD_ADMIN_HOST: '0.0.0.0', HERMOD_ADMIN_PORT: '0', HERMOD_ADMIN_USER: 'kaiwhakahaere', HERMOD_ADMIN_PASSWORD: 'tēnā 👋🏽' }).admin,
    ).toEqual({
      host: '0.0.0.0',
      port: 0,
      user: 'kaiwhakahaere',
      password: 'tēnā 👋🏽',
    });
    expect(() => resolveConfig({ HERMOD_ADMIN_USER: 'ops:team' })).toThrow(/HERMOD_ADMIN_USER must be a non-empty name without a colon/);
    expect(() => resolveConfig({ HERMOD_ADMIN_PORT: '70000' })).toThrow(ConfigError);
  });

  it('starts one gateway per core beside the core that core itself needs, at least one, unless HERMOD_GATEWAYS says otherwise', () => {
    expect(resolveConfig({}).gateways).toBe(Math.max(1, os.availableParallelism() - 1));
    expect(resolveConfig({ HERMOD_GATEWAYS: '3' }).gateways).toBe(3);
  });

  it('turns durations and outcome weights into numbers', () => {
    const c = resolveConfig({ HERMOD_SMPP_ENQUIRE_LINK: '5s', HERMOD_SMSC_RECEIPT_DELAY: '1m', HERMOD_SMSC_OUTCOMES: 'delivered=90, undeliverable=10' });
    expect(c.smpp.enquireLinkMs).toBe(5000);
    expect(c.simulator.receiptDelayMs).toBe(60_000);
    expect(c.simulator.outcomes).toEqual({ delivered: 90, undeliverable: 10, expired: 0, rejected: 0 });
  });

  it('refuses a duration written without a unit, naming the variable and the units, rather than reading it as milliseconds', () => {
    expect(() => resolveConfig({ HERMOD_SHUTDOWN_GRACE: '10' })).toThrow(ConfigError);
    expect(() => resolveConfig({ HERMOD_SHUTDOWN_GRACE: '10' })).toThrow(
      'HERMOD_SHUTDOWN_GRACE: "10" has no unit: write it with ms, s, m, h or d (10s, 10ms…)',
    );
    expect(() => resolveConfig({ HERMOD_CALLBACK_RETRY_FOR: '24' })).toThrow(/^HERMOD_CALLBACK_RETRY_FOR: "24" has no unit/);
    expect(() => resolveConfig({ HERMOD_IDEMPOTENCY_TTL: '1.5' })).toThrow(/^HERMOD_IDEMPOTENCY_TTL: "1.5" has no unit/);
    // Nothing is nothing in any unit.
    expect(resolveConfig({ HERMOD_GATEWAY_BATCH_DELAY: '0' }).gatewayBatchDelayMs).toBe(0);
    expect(resolveConfig({ HERMOD_SHUTDOWN_GRACE: '10s' }).shutdownGraceMs).toBe(10_000);
  });

  it('creates the bootstrap application only with a password or an API key', () => {
    expect(resolveConfig({ HERMOD_BOOTSTRAP_APP: 'acme', HERMOD_BOOTSTRAP_PASSWORD: 'pw' }).bootstrap).toEqual({ app: 'acme', password: 'pw', apiKey: '' });
    expect(() => resolveConfig({ HERMOD_BOOTSTRAP_APP: 'acme' })).toThrow(ConfigError);
  });

  it('reads the embedded history engine limits as sizes, 512 MiB and 64 MiB by default', () => {
    expect(resolveConfig({}).adapters).toMatchObject({ chdbMaxMemoryBytes: 512 * 1024 * 1024, chdbCacheBytes: 64 * 1024 * 1024 });
    const set = resolveConfig({ HERMOD_CHDB_MAX_MEMORY: '1G', HERMOD_CHDB_CACHE_SIZE: '268435456' }).adapters;
    expect([set.chdbMaxMemoryBytes, set.chdbCacheBytes]).toEqual([1024 ** 3, 256 * 1024 * 1024]);
    expect(() => resolveConfig({ HERMOD_CHDB_MAX_MEMORY: 'lots' })).toThrow(/HERMOD_CHDB_MAX_MEMORY/);
  });

  it('tries a message its carrier refuses for now again after a minute, then doubling up to an hour, for a day, unless told otherwise', () => {
    expect(resolveConfig({}).sendRetry).toEqual({ firstMs: 60_000, longestMs: 3_600_000, forMs: 86_400_000 });
    expect(resolveConfig({ HERMOD_SEND_RETRY_FIRST: '5m', HERMOD_SEND_RETRY_LONGEST: '4h', HERMOD_SEND_RETRY_FOR: '5d' }).sendRetry).toEqual({
      firstMs: 300_000,
      longestMs: 14_400_000,
      forMs: 432_000_000,
    });
    expect(() => resolveConfig({ HERMOD_SEND_RETRY_FIRST: '2h' })).toThrow(/HERMOD_SEND_RETRY_LONGEST must not be shorter/);
    expect(() => resolveConfig({ HERMOD_SEND_RETRY_FIRST: '0s' })).toThrow(ConfigError);
  });

  it('refuses bad values with the name of the variable', () => {
    expect(() => resolveConfig({ HERMOD_HTTPS_PORT: '70000' })).toThrow(/HERMOD_HTTPS_PORT/);
    expect(() => resolveConfig({ HERMOD_SMPP_SUBMIT_TIMEOUT: 'soon' })).toThrow(/HERMOD_SMPP_SUBMIT_TIMEOUT/);
    expect(() => resolveConfig({ HERMOD_BUS: 'carrier-pigeon' })).toThrow(/HERMOD_BUS must be one of memory, redis, kafka/);
    expect(() => resolveConfig({ HERMOD_SMSC_OUTCOMES: 'lost=1' })).toThrow(/lost=1/);
    expect(() => resolveConfig({ HERMOD_MO_DEDUP_WINDOW: '200ms' })).toThrow(/HERMOD_MO_DEDUP_WINDOW must be at least 1s/);
    expect(resolveConfig({ HERMOD_MO_DEDUP_WINDOW: '2m' }).moDedupWindowMs).toBe(120_000);
  });

  it('refuses a Redis command time limit not a second over the replicas’ wait, rather than raise it silently', () => {
    expect(() => resolveConfig({ HERMOD_REDIS_COMMAND_TIMEOUT: '1s' })).toThrow(
      /^HERMOD_REDIS_COMMAND_TIMEOUT must be at least a second more than HERMOD_REDIS_WAIT_TIMEOUT \(1s\): at least 2s, got "1s"/,
    );
    expect(() => resolveConfig({ HERMOD_REDIS_COMMAND_TIMEOUT: '3s', HERMOD_REDIS_WAIT_TIMEOUT: '2500ms' })).toThrow(/at least 3500ms, got "3s"/);
    expect(resolveConfig({ HERMOD_REDIS_COMMAND_TIMEOUT: '2s' }).adapters.redisCommandTimeoutMs).toBe(2000);
  });

  it('holds the Idempotency-Key of a request whose gateway died a minute, not ten, by default', () => {
    expect(resolveConfig({}).idempotencyLeaseMs).toBe(60_000);
    expect(resolveConfig({ HERMOD_IDEMPOTENCY_LEASE: '10m' }).idempotencyLeaseMs).toBe(600_000);
  });

  it('refuses a core address that is not host:port for every role, naming HERMOD_CORE_ADDRESS', () => {
    for (const address of ['127.0.0.1:notaport', 'nonsense', '127.0.0.1:70000', 'core.internal:', ':50051 ']) {
      expect(() => resolveConfig({ HERMOD_CORE_ADDRESS: address }), address).toThrow(/^HERMOD_CORE_ADDRESS must be host:port or \[v6\]:port/);
    }
    for (const address of ['127.0.0.1:50051', 'localhost:0', '[::1]:7000']) expect(resolveConfig({ HERMOD_CORE_ADDRESS: address }).coreAddress).toBe(address);
  });

  it('gives Intelligent Messaging attempts without a timeout a bounded default, in whole seconds up to 7 days', () => {
    expect(resolveConfig({}).im.defaultTimeoutMs).toBe(24 * 3600 * 1000);
    expect(resolveConfig({ HERMOD_IM_DEFAULT_TIMEOUT: '90s' }).im.defaultTimeoutMs).toBe(90_000);
    expect(resolveConfig({ HERMOD_IM_DEFAULT_TIMEOUT: '0' }).im.defaultTimeoutMs).toBe(0);
    expect(resolveConfig({ HERMOD_IM_DEFAULT_TIMEOUT: '7d' }).im.defaultTimeoutMs).toBe(604_800_000);
    expect(() => resolveConfig({ HERMOD_IM_DEFAULT_TIMEOUT: '8d' })).toThrow(/HERMOD_IM_DEFAULT_TIMEOUT must be whole seconds/);
    expect(() => resolveConfig({ HERMOD_IM_DEFAULT_TIMEOUT: '1500ms' })).toThrow(/HERMOD_IM_DEFAULT_TIMEOUT/);
    expect(() => resolveConfig({ HERMOD_IM_DEFAULT_TIMEOUT: 'forever' })).toThrow(/HERMOD_IM_DEFAULT_TIMEOUT/);
  });

  it('needs the addresses of the engines it is asked to use', () => {
    expect(() => resolveConfig({ HERMOD_BUS: 'kafka' })).toThrow(/HERMOD_KAFKA_BROKERS/);
    expect(() => resolveConfig({ HERMOD_HISTORY: 'clickhouse' })).toThrow(/HERMOD_CLICKHOUSE_URL/);
    const c = resolveConfig({ HERMOD_BUS: 'kafka', HERMOD_KAFKA_BROKERS: 'k1:9092, k2:9092' });
    expect(c.adapters.kafkaBrokers).toEqual(['k1:9092', 'k2:9092']);
    expect(c.adapters.coreRunsWorkers).toBe(false);
    expect(c.adapters.kafkaSessionTimeoutMs).toBe(30_000);
    const kafka = { HERMOD_BUS: 'kafka', HERMOD_KAFKA_BROKERS: 'k1:9092' };
    expect(resolveConfig({ ...kafka, HERMOD_KAFKA_SESSION_TIMEOUT: '8s' }).adapters.kafkaSessionTimeoutMs).toBe(8_000);
    expect(() => resolveConfig({ ...kafka, HERMOD_KAFKA_SESSION_TIMEOUT: '2s' })).toThrow(/HERMOD_KAFKA_SESSION_TIMEOUT must be from 6s to 30m/);
  });

  it('takes a sender with a display name, returning bounces to the domain of the address in its angle brackets', () => {
    const from = 'Kāinga Ōra 🏠 <noreply@example.com>';
    expect(resolveConfig({ HERMOD_SMTP_FROM: from }).channels.email).toMatchObject({ from, bounceDomain: 'example.com' });
    const quoted = resolveConfig({ HERMOD_SMTP_FROM: '"Ngā Tāngata, Ltd" <kia.ora@whānau.nz>' });
    expect(quoted.channels.email.bounceDomain).toBe('xn--whnau-gwa.nz');
    expect(resolveConfig({ HERMOD_SMTP_FROM: '株式会社 <info@mail.example.jp>', HERMOD_BOUNCE_DOMAIN: 'bounce.example.jp' }).channels.email.bounceDomain).toBe(
      'bounce.example.jp',
    );
  });

  it('refuses a sender that is no e-mail address by naming HERMOD_SMTP_FROM', () => {
    for (const from of ['Kāinga Ōra <noreply@example.com', 'Kāinga Ōra', 'noreply@', '<>', 'Ana <ana@example.com> extra'])
      expect(() => resolveConfig({ HERMOD_SMTP_FROM: from }), from).toThrow(/^HERMOD_SMTP_FROM must be an e-mail address/);
  });

  it('reads bounces only when asked, or for the simulators’ sink, with return paths on the sender’s domain', () => {
    expect(resolveConfig({ HERMOD_CHANNEL_SIMULATORS: 'false' }).channels.email).toMatchObject({ bounceDomain: '', bounceListener: undefined });
    expect(resolveConfig({}).channels.email).toMatchObject({ bounceDomain: 'localhost', bounceListener: { port: 2526 } });
    expect(resolveConfig({ HERMOD_SMTP_SINK_PORT: '0' }).channels.email.bounceListener).toMatchObject({ port: 0 });
    const live = resolveConfig({ HERMOD_CHANNEL_SIMULATORS: 'false', HERMOD_SMTP_FROM: 'kia.ora@mail.example.com', HERMOD_BOUNCE_SMTP_PORT: '25' });
    expect(live.channels.email).toMatchObject({ bounceDomain: 'mail.example.com', bounceListener: { host: '0.0.0.0', port: 25 } });
    expect(() => resolveConfig({ HERMOD_BOUNCE_DOMAIN: 'tēnā koe' })).toThrow(/HERMOD_BOUNCE_DOMAIN must be a domain name/);
    expect(resolveConfig({}).channels.email.bounceSecret).toBe('');
    expect(resolveConfig({ HERMOD_BOUNCE_SECRET: 'pō-mārie-0123456789abcdef' }).channels.email.bounceSecret).toBe('pō-mārie-0123456789abcdef');
    expect(() => resolveConfig({ HERMOD_BOUNCE_SECRET: 'hunter2' })).toThrow(/^HERMOD_BOUNCE_SECRET must be at least 16 characters/);
    expect(resolveConfig({ HERMOD_WAB_REQUEST_TIMEOUT: '750ms', HERMOD_WAB_RESEND_UNCERTAIN: 'true' }).channels.wab).toMatchObject({
      requestTimeoutMs: 750,
      resendUncertain: true,
    });
  });

  it('reads HERMOD_TRUSTED_PROXIES as addresses and networks, and refuses a host name, naming the variable', () => {
    expect(resolveConfig({}).trustedProxies).toEqual([]);
    expect(resolveConfig({ HERMOD_TRUSTED_PROXIES: ' 10.0.0.0/8, 192.168.1.7 ,fd00::/8' }).trustedProxies).toEqual(['10.0.0.0/8', '192.168.1.7', 'fd00::/8']);
    expect(() => resolveConfig({ HERMOD_TRUSTED_PROXIES: '10.0.0.0/8, lb.internal' })).toThrow(
      /HERMOD_TRUSTED_PROXIES: "lb.internal" is not an address or a network such as 10.0.0.0\/8/,
    );
  });

  it('refuses a Redis URL hermod cannot use as one line naming HERMOD_REDIS_URL, when Redis is used', () => {
    const redis = (url: string) => resolveConfig({ HERMOD_STATE: 'redis', HERMOD_REDIS_URL: url });
    expect(() => redis('redis//127.0.0.1:6379')).toThrow(/HERMOD_REDIS_URL "redis\/\/127.0.0.1:6379": it must start with redis:\/\/ or rediss:\/\//);
    expect(() => redis('http://127.0.0.1:6379')).toThrow(/must start with redis:\/\//);
    expect(() => redis('redis://127.0.0.1:99999')).toThrow(/port 99999 is out of range/);
    expect(() => redis('redis://127.0.0.1:6379/99')).toThrow(/database "99" is not one of a Redis's 16 \(0-15\)/);
    expect(() => redis('redis://:pā55@127.0.0.1:6379/x')).toThrow(ConfigError);
    // The password is never shown.
    expect(() => redis('redis://ops:s3cret@127.0.0.1:6379/99')).toThrow(/redis:\/\/ops:\*\*\*@127.0.0.1/);
    for (const good of [
      'redis://127.0.0.1:6379',
      'redis://127.0.0.1:6379/',
      'redis://redis-0/3',
      'rediss://ops:s3cret@cache.example:6380/15',
      'redis://[::1]:6379',
      '/run/redis.sock',
    ])
      expect(redis(good).adapters.redisUrl, good).toBe(good);
    // Not used: not checked.
    expect(resolveConfig({ HERMOD_REDIS_URL: 'redis//typo' }).adapters.redisUrl).toBe('redis//typo');
  });

  it('refuses a Kafka broker without a port, or with a scheme, naming HERMOD_KAFKA_BROKERS', () => {
    const kafka = (brokers: string) => resolveConfig({ HERMOD_BUS: 'kafka', HERMOD_KAFKA_BROKERS: brokers });
    expect(() => kafka('127.0.0.1')).toThrow(/HERMOD_KAFKA_BROKERS: "127.0.0.1" is not host:port/);
    expect(() => kafka('kafka://127.0.0.1:9092')).toThrow(ConfigError);
    expect(() => kafka('kafka-0:9092,kafka-1:99999')).toThrow(/"kafka-1:99999"/);
    expect(kafka('kafka-0:9092, 10.0.0.7:9093,[::1]:9094').adapters.kafkaBrokers).toEqual(['kafka-0:9092', '10.0.0.7:9093', '[::1]:9094']);
  });
});
