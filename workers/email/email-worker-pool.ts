import type { EmailConfig } from '../../lib/config';
import { startCarrierPool, type CarrierPool, type PoolDeps } from '../carrier-pool';
import { bounceSecretFile } from '../carriers/smtp/bounce-secret-file';
import { createSmtpCarrier } from '../carriers/smtp/smtp-carrier';

/** The e-mail pool of this process: one pooled SMTP transport, the worker that feeds it, and the bounce listener when configured. */
export async function startEmailWorkerPool(deps: PoolDeps & { config: EmailConfig; dataDir: string }): Promise<CarrierPool> {
  // Return paths are signed: with HERMOD_BOUNCE_SECRET, else the secret kept in the data directory.
  const bounceSecret = deps.config.bounceSecret || (deps.config.bounceDomain ? bounceSecretFile(deps.dataDir) : '');
  const carrier = createSmtpCarrier({ ...deps.config, bounceSecret }, deps.log.child({ carrier: 'smtp' }));
  // Its port first: one another process holds stops the start before the worker joins the bus's group. A bounce
  // that comes before the worker takes reports is answered 451, and its server sends it again.
  await carrier.startBounceListener().catch(async (err: unknown) => {
    await carrier.close();
    throw err;
  });
  return startCarrierPool('email', carrier, deps).catch(async (err: unknown) => {
    await carrier.close();
    throw err;
  });
}
