import type { Client } from './https-client';

const FINAL = new Set(['received', 'blocked', 'deficient', 'frozen', 'rejected', 'failed', 'dead', 'expired', 'read']);

export interface SentMessage {
  id: string;
  destination: string;
  content: string;
}

export interface LoadRun {
  /** Every send answered 202, so far. */
  readonly accepted: SentMessage[];
  /** Sends that got no 202 (the service was down, or said no): not owed to anyone. */
  readonly refused: number;
  /** Resolves when every send has been tried. */
  done: Promise<void>;
}

/**
 * SMS Gateway v2 sends from `concurrency` clients at once, like users who keep
 * sending while the service falls over: a send that fails is not retried,
 * and only a 202 counts as accepted.
 */
export function runSmsLoad(
  client: () => Client,
  options: { count: number; concurrency: number; message(i: number): { destination: string; content: string } },
): LoadRun {
  const accepted: SentMessage[] = [];
  let refused = 0;
  let next = 0;
  const sender = async (): Promise<void> => {
    while (next < options.count) {
      const body = options.message(next++);
      try {
        const r = await client().post('/rest/sms/v2/messages', body);
        if (r.status === 202) accepted.push({ id: r.json.id, ...body });
        else refused++;
      } catch {
        refused++;
      }
    }
  };
  const done = Promise.all(Array.from({ length: options.concurrency }, sender)).then(() => undefined);
  return {
    accepted,
    get refused() {
      return refused;
    },
    done,
  };
}

export interface FinalReport {
  /** Accepted messages the service no longer knows (404), or whose content changed (`found` says which). */
  lost: (SentMessage & { found: string })[];
  /** Known, but not at a final status by the deadline (id -> status). */
  withoutFinal: Map<string, string>;
}

/** Polls each message until it reaches a final status or `timeoutMs` passes. */
export async function awaitFinalStatuses(client: Client, messages: readonly SentMessage[], timeoutMs: number): Promise<FinalReport> {
  const deadline = Date.now() + timeoutMs;
  const pending = new Map(messages.map((m) => [m.id, m]));
  const lost: (SentMessage & { found: string })[] = [];
  const last = new Map<string, string>();
  while (pending.size > 0 && Date.now() < deadline) {
    const batch = [...pending.values()];
    for (let i = 0; i < batch.length; i += 32) {
      await Promise.all(
        batch.slice(i, i + 32).map(async (m) => {
          const r = await client.get(`/rest/sms/v2/messages?id=${m.id}`).catch(() => undefined);
          if (!r) return;
          if (r.status === 404 || (r.status === 200 && r.json.content !== m.content)) {
            lost.push({ ...m, found: r.status === 404 ? 'not found' : `content ${JSON.stringify(r.json.content)}` });
            pending.delete(m.id);
          } else if (r.status === 200) {
            last.set(m.id, r.json.status);
            if (FINAL.has(r.json.status)) pending.delete(m.id);
          }
        }),
      );
    }
    if (pending.size > 0) await new Promise((r) => setTimeout(r, 500));
  }
  return { lost, withoutFinal: new Map([...pending.keys()].map((id) => [id, last.get(id) ?? 'unknown'])) };
}
