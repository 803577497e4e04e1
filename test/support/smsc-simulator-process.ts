import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startRole, type RoleProcess } from './role-process';
import type { FinalReport, SentMessage } from './sms-load';

const READY = '"msg":"SMSC simulator listening"';

/** One accepted submit_sm, from the simulator's debug log. */
export interface LoggedSubmit {
  carrierMessageId: string;
  destination: string;
  text: string;
  /** Epoch ms. */
  at: number;
}

export interface SmscSimulatorProcess {
  /** Where it listens (bound by the process itself, on port 0 the first time). */
  port: number;
  /** Its own data directory: owed receipts survive there across its restarts. */
  dataDir: string;
  output(): string;
  /** Accepted submits it logged (over every start of this helper's process). */
  submits(): LoggedSubmit[];
  /** Carrier ids whose receipt an ESME acknowledged with deliver_sm_resp. */
  acknowledgedReceipts(): Set<string>;
  stop(): Promise<number | null>;
  kill9(): Promise<void>;
  /** Starts it again on the same port with the same data directory (after stop or kill9). */
  restart(): Promise<void>;
}

/**
 * Runs `hermod smsc-simulator` as its own OS process, so hermod can crash
 * without taking its carrier along. The process binds port 0 and the port is
 * read from its ready log line (no free-port race); a restart asks for the
 * same port again.
 */
export async function startSmscSimulatorProcess(
  options: { receiptDelay?: string; dataDir?: string; env?: Record<string, string> } = {},
): Promise<SmscSimulatorProcess> {
  const dataDir = options.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-smsc-'));
  let port = 0;
  let current: RoleProcess | undefined;
  let earlier = '';

  const launch = async (): Promise<void> => {
    const env = {
      HERMOD_DATA_DIR: dataDir,
      HERMOD_SMSC_HOST: '127.0.0.1',
      HERMOD_SMSC_PORT: String(port),
      HERMOD_SMSC_RECEIPT_DELAY: options.receiptDelay ?? '20ms',
      HERMOD_HOST: '127.0.0.1',
      HERMOD_METRICS_PORT: '0',
      // Debug level logs each accepted submit, which is how a test counts duplicates at the carrier.
      HERMOD_LOG_LEVEL: 'debug',
      ...options.env,
    };
    current = await startRole(['smsc-simulator'], env, READY);
    port = current.ready.port;
  };
  await launch();

  const output = (): string => earlier + (current?.output() ?? '');
  return {
    get port() {
      return port;
    },
    dataDir,
    output,
    submits() {
      return logged(output(), 'submit accepted').map(({ carrierMessageId, destination, text, time }) => ({
        carrierMessageId,
        destination,
        text,
        at: Date.parse(time),
      }));
    },
    acknowledgedReceipts() {
      return new Set(logged(output(), 'receipt acknowledged').map((l) => l.carrierMessageId as string));
    },
    async stop() {
      return current!.stop();
    },
    async kill9() {
      await current!.kill9();
    },
    async restart() {
      earlier += current!.output();
      await launch();
    },
  };
}

/** The JSON log lines with message `msg`. */
function logged(output: string, msg: string): Record<string, any>[] {
  const found: Record<string, any>[] = [];
  const needle = `"msg":${JSON.stringify(msg)}`;
  for (const line of output.split('\n')) {
    if (!line.includes(needle)) continue;
    try {
      found.push(JSON.parse(line));
    } catch {
      // a line torn by kill -9
    }
  }
  return found;
}

/**
 * For a failure message: each message without a final status, what the SMSC
 * accepted for it, and which of those receipts hermod acknowledged (a receipt
 * acknowledged and still no final status was lost inside hermod).
 */
export function explainWithoutFinal(report: FinalReport, accepted: readonly SentMessage[], smsc: SmscSimulatorProcess): string[] {
  const byId = new Map(accepted.map((m) => [m.id, m]));
  const acked = smsc.acknowledgedReceipts();
  const submits = smsc.submits();
  return [...report.withoutFinal].map(([id, status]) => {
    const m = byId.get(id)!;
    const carrierIds = submits.filter((s) => s.destination === m.destination).map((s) => s.carrierMessageId);
    return `${id} ${status}: submitted as [${carrierIds.join(', ')}], receipts acknowledged by hermod: [${carrierIds.filter((c) => acked.has(c)).join(', ')}]`;
  });
}
