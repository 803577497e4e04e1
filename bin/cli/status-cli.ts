import { createGrpcCredentials } from '../../lib/grpc-credentials';
import { fromServiceError } from '../../lib/grpc-errors';
import type { Config } from '../../lib/config';
import { escapeControlCharacters as cell } from '../../core/domain/control-characters';
import {
  OperationsClient,
  type ListBusBacklogResponse,
  type ListCallbackBacklogResponse,
  type ListCarrierBindsResponse,
} from '../../proto/gen/hermod/v1/operations';
import { commandError } from './command-error';
import { toHermodError } from '../../lib/errors';

type Out = (line: string) => void;

/**
 * `hermod status`: the operator console's three tables on a terminal, tab
 * separated as the operators' other commands print: the bus's backlog, the
 * carriers' binds, the callbacks owed. Exit 1 when core cannot be asked.
 */
export async function runStatusCommand(config: Readonly<Config>, out: Out, err: Out): Promise<number> {
  const operations = new OperationsClient(config.coreAddress, createGrpcCredentials(config.grpcTls).channel());
  const ask = <Res>(fn: (req: object, cb: (e: never, res: Res) => void) => unknown): Promise<Res> =>
    new Promise((resolve, reject) => fn.call(operations, {}, (e: never, res: Res) => (e ? reject(fromServiceError(e)) : resolve(res))));
  try {
    // Each table on its own: a core that cannot answer one (an older core, a method it does not serve) still shows the others.
    const [backlogAsked, bindsAsked, callbacksAsked] = await Promise.allSettled([
      ask<ListBusBacklogResponse>(operations.listBusBacklog as never),
      ask<ListCarrierBindsResponse>(operations.listCarrierBinds as never),
      ask<ListCallbackBacklogResponse>(operations.listCallbackBacklog as never),
    ]);
    const asked = [backlogAsked, bindsAsked, callbacksAsked];
    const failures = asked.flatMap((a) => (a.status === 'rejected' ? [a.reason as unknown] : []));
    // Core not there at all: one line, as every operators' command says it.
    if (failures.length === asked.length) throw failures[0];
    const backlog = backlogAsked.status === 'fulfilled' ? backlogAsked.value : { topics: [] };
    const binds = bindsAsked.status === 'fulfilled' ? bindsAsked.value : { binds: [] };
    const callbacks = callbacksAsked.status === 'fulfilled' ? callbacksAsked.value : { applications: [] };
    const unread = (a: PromiseSettledResult<unknown>): boolean => {
      if (a.status === 'fulfilled') return false;
      out(`(could not be read: ${cell(toHermodError(a.reason).message)})`);
      return true;
    };
    out('backlog');
    out('topic\tgroup\trecords');
    unread(backlogAsked);
    for (const t of backlog.topics) out(`${t.topic}\t${t.group}\t${t.error ? `unknown: ${cell(t.error)}` : t.records}`);
    out('');
    out('binds');
    out('channel\tbind\treporter\tstate\twindow\tsubmits/s\tlast error');
    if (!unread(bindsAsked) && binds.binds.length === 0) out('(none reported)');
    for (const b of binds.binds) {
      const error = b.lastError ? `${cell(b.lastError)}${b.lastErrorAt ? ` (${b.lastErrorAt.toISOString()})` : ''}` : '-';
      out(
        `${b.channel}\t${cell(b.bind)}\t${b.reporter}\t${b.up ? 'up' : 'down'}\t${b.windowInUse}/${b.windowSize}\t${b.submitsPerSecond.toFixed(1)}\t${error}`,
      );
    }
    out('');
    out('callbacks');
    out('application\towed\tawaiting retry\tdelivered\tfailed tries\tfailed\tlast error');
    if (!unread(callbacksAsked) && callbacks.applications.length === 0) out('(none)');
    for (const a of callbacks.applications) {
      out(
        `${cell(a.applicationName || a.applicationId)}\t${a.owed}\t${a.waiting}\t${a.delivered}\t${a.failedTries}\t${a.failed}\t${a.lastError ? `${cell(a.lastError)}${a.lastErrorAt ? ` (${a.lastErrorAt.toISOString()})` : ''}` : '-'}`,
      );
    }
    return failures.length > 0 ? 1 : 0;
  } catch (e) {
    err(commandError(e, config.coreAddress));
    return 1;
  } finally {
    operations.close();
  }
}
