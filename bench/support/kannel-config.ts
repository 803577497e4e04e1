export interface KannelPorts {
  /** bearerbox's HTTP administration (status.txt). */
  admin: number;
  /** bearerbox's port for smsbox connections. */
  smsbox: number;
  /** The fake SMSC link: bearerbox listens here and fakesmsc connects to it. */
  fake: number;
  /** smsbox's HTTP sendsms interface. */
  sendsms: number;
}

export interface KannelConfigOptions {
  dir: string;
  ports: KannelPorts;
  adminPassword: string;
  user: string;
  password: string;
}

/**
 * One kannel.conf for bearerbox and smsbox (Kannel's userguide groups): `core`
 * with the admin and smsbox ports, a `fake` SMSC on its own port, an `smsbox`
 * with the sendsms port, and one `sendsms-user`. Everything binds to loopback;
 * logs go to `dir` at warning level (debug logging per message would slow
 * Kannel down and is not what a production Kannel runs with).
 */
export function kannelConfig(o: KannelConfigOptions): string {
  const q = (s: string): string => `"${s.replace(/["\\]/g, '')}"`;
  return [
    'group = core',
    `admin-port = ${o.ports.admin}`,
    `admin-password = ${q(o.adminPassword)}`,
    `status-password = ${q(o.adminPassword)}`,
    'admin-interface = "127.0.0.1"',
    'admin-allow-ip = "127.0.0.1"',
    `smsbox-port = ${o.ports.smsbox}`,
    'box-allow-ip = "127.0.0.1"',
    'dlr-storage = internal',
    `log-file = ${q(`${o.dir}/bearerbox.log`)}`,
    'log-level = 2',
    '',
    'group = smsc',
    'smsc = fake',
    'smsc-id = fake',
    'host = "127.0.0.1"',
    `port = ${o.ports.fake}`,
    'connect-allow-ip = "127.0.0.1"',
    '',
    'group = smsbox',
    'bearerbox-host = "127.0.0.1"',
    `sendsms-port = ${o.ports.sendsms}`,
    'sendsms-interface = "127.0.0.1"',
    `log-file = ${q(`${o.dir}/smsbox.log`)}`,
    'log-level = 2',
    '',
    'group = sendsms-user',
    `username = ${q(o.user)}`,
    `password = ${q(o.password)}`,
    'max-messages = 1',
    '',
  ].join('\n');
}
