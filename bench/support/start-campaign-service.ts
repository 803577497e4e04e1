import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { startHermod, type HermodProcess } from '../../test/support/hermod-process';
import { createSmscSimulator, type SmscSimulator } from '../../workers/simulators/smsc-simulator';
import type { Service } from './service-request';

export interface CampaignServiceOptions {
  /** A running service to use instead of starting one. */
  url?: string;
  user: string;
  pass: string;
  receiptDelayMs: number;
  gateways: string;
  /** Arguments for node in every hermod process (BENCH_NODE_ARGS, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`). */
  nodeArgs?: string[];
}

/** The service under test: the one at `url`, or hermod started here with a fresh data directory and an SMSC simulator in this process. */
export async function startCampaignService(o: CampaignServiceOptions): Promise<{ service: Service; hermod?: HermodProcess; simulator?: SmscSimulator }> {
  const auth = 'Basic ' + Buffer.from(`${o.user}:${o.pass}`).toString('base64');
  if (o.url) {
    // A service elsewhere may have a self-signed certificate: this is a benchmark, not a client to trust.
    return { service: { url: o.url, auth, app: o.user, agent: new https.Agent({ rejectUnauthorized: false }) } };
  }
  const simulator = createSmscSimulator({ host: '127.0.0.1', port: 0, receiptDelayMs: o.receiptDelayMs });
  const { port } = await simulator.start();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-campaign-bench-'));
  const hermod = await startHermod({
    dataDir,
    nodeArgs: o.nodeArgs,
    env: {
      HERMOD_BOOTSTRAP_APP: o.user,
      HERMOD_BOOTSTRAP_PASSWORD: o.pass,
      HERMOD_SMSC_SIMULATOR: 'false',
      HERMOD_SMPP_PORT: String(port),
      HERMOD_SMSC_RECEIPT_DELAY: `${o.receiptDelayMs}ms`,
      HERMOD_GATEWAYS: o.gateways,
    },
  });
  return { service: { url: hermod.baseUrl, auth, app: o.user, agent: new https.Agent({ ca: hermod.ca() }) }, hermod, simulator };
}
