import { ConfigError } from './config';

/**
 * A listener that could not bind, as one line naming the setting that chose
 * the port (or, for an address that is not this machine's or does not
 * resolve, the one that chose the host) and who may hold it; any other
 * failure as it was. `holders`: who else in a deployment listens there
 * (another gateway, another core…).
 */
export function listenError(err: unknown, setting: string, host: string, port: number, holders: string, hostSetting = setting): unknown {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const where = `port ${port} on ${host}`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NONAME')
    return new ConfigError(`${hostSetting}: ${host} does not resolve to an address of this machine (${code}); give an address such as 0.0.0.0 or 127.0.0.1`);
  if (code === 'EADDRINUSE') {
    return new ConfigError(
      `${setting}: ${where} is in use by another process (${holders}, or any program listening there: ss -ltnp 'sport = :${port}' names it)`,
    );
  }
  if (code === 'EACCES') return new ConfigError(`${setting}: ${where} may not be bound by this user (ports below 1024 need privileges)`);
  if (code === 'EADDRNOTAVAIL') return new ConfigError(`${hostSetting}: ${host} is not an address of this machine`);
  return err;
}
