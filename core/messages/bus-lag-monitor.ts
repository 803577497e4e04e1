import type { Bus } from '../ports/bus';
import { topicName } from '../ports/bus';
import { busLag } from '../../lib/metrics';
import type { Logger } from '../../lib/log';

/** The consumer groups whose backlog SREs watch: each channel's worker pool, and core on the status topic. */
const WATCHED = [
  { topic: topicName('sms'), group: 'sms-workers' },
  { topic: topicName('status'), group: 'core-status' },
  { topic: topicName('inbound'), group: 'core-inbound' },
  { topic: topicName('callbacks'), group: 'callback-senders' },
];

/** Samples each watched group's lag into hermod_bus_lag_records every few seconds. */
export function startBusLagMonitor(bus: Bus, log: Logger, everyMs = 5000): { stop(): void } {
  let warned = false;
  const sample = async (): Promise<void> => {
    for (const { topic, group } of WATCHED) {
      try {
        busLag.set({ topic, group }, await bus.lag(topic, group));
      } catch (err) {
        if (!warned) log.warn('could not read bus lag', { err, topic, group });
        warned = true;
      }
    }
  };
  void sample();
  const timer = setInterval(() => void sample(), everyMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
