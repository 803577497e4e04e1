/**
 * The environment of roles started one process each on a Redis of a test's own (bus and hot state there, two
 * partitions), an SMSC simulator and a data directory, with an application `acme` (password `secret`); every port
 * a role listens on is 0, said in its ready line.
 */
export function rolesOnRedisEnv(o: { redisPort: number; smscPort: number; dataDir: string }): Record<string, string> {
  return {
    HERMOD_BUS: 'redis',
    HERMOD_STATE: 'redis',
    HERMOD_REDIS_URL: `redis://127.0.0.1:${o.redisPort}`,
    HERMOD_BUS_PARTITIONS: '2',
    HERMOD_DATA_DIR: o.dataDir,
    HERMOD_CORE_ADDRESS: '127.0.0.1:0',
    HERMOD_METRICS_PORT: '0',
    HERMOD_HOST: '127.0.0.1',
    HERMOD_SMPP_PORT: String(o.smscPort),
    HERMOD_BOUNCE_SMTP_PORT: '0',
    HERMOD_BOOTSTRAP_APP: 'acme',
    HERMOD_BOOTSTRAP_PASSWORD: 'secret',
  };
}
