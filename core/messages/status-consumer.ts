import type { Bus, Subscription } from '../ports/bus';
import { topicName } from '../ports/bus';
import type { History } from '../ports/history';
import type { HotState } from '../ports/state';
import type { StatusChange, StatusRecorder } from './status-recorder';
import { decodeStatus, type StatusUpdate } from './bus-payloads';
import type { Logger } from '../../lib/log';
import { HermodError } from '../../lib/errors';

/**
 * Core's side of the status topic: resolves delivery reports known only by
 * carrier id, records each change, and acknowledges the batch only once its
 * events are durable (a crash means redelivery, and duplicates are ignored
 * because statuses never move backwards).
 */
export function startStatusConsumer(deps: { bus: Bus; state: HotState; history: History; recorder: StatusRecorder; log: Logger }): Promise<Subscription> {
  const resolveId = async (u: StatusUpdate): Promise<string | undefined> => {
    if (u.id) return u.id;
    if (!u.carrierId) return undefined;
    return (await deps.state.getMessageIdByCarrierId(u.carrierId)) ?? (await deps.history.findMessageIdByCarrierId(u.carrierId));
  };

  return deps.bus.subscribe(
    topicName('status'),
    async (records) => {
      const updates = records.map((r) => decodeStatus(r.value));
      const ids = await Promise.all(updates.map(resolveId));
      const changes: StatusChange[] = [];
      updates.forEach((u, i) => {
        const id = ids[i];
        if (!id) {
          // A receipt for a submit whose outcome is not recorded yet: try again shortly.
          if (records[i]!.redeliveries < 20) throw new HermodError('unavailable', `no message for carrier id ${u.carrierId}`);
          deps.log.warn('dropping delivery report for an unknown carrier id', { carrierId: u.carrierId, status: u.status });
          return;
        }
        changes.push({
          messageId: id,
          applicationId: '',
          channel: u.channel,
          status: u.status,
          at: u.at,
          detail: u.detail,
          carrierId: u.carrierId,
          errorCode: u.errorCode,
        });
      });
      await deps.recorder.record(changes);
    },
    { group: 'core-status', maxBatch: 2000 },
  );
}
