import type { SmscSimulator } from '../../workers/simulators/smsc-simulator';
import { PROGRESS_MS } from './progress-ms';
import { readReport } from './read-report';
import { MB, type RssSampler } from './rss-sampler';
import type { Service } from './service-request';
import { sleep } from './sleep';

/** Waits for one submit_sm per member at the simulator, or (external service) for every report row to be past `queued`. */
export async function waitAllSubmitted(
  s: Service,
  campaignId: number,
  simulator: SmscSimulator | undefined,
  rss: RssSampler,
  from: number,
  o: { members: number; timeoutS: number },
): Promise<{ done: boolean; reached: number }> {
  const { members } = o;
  const deadline = from + o.timeoutS * 1000;
  let last = { at: from, count: 0 };
  const reached = async (): Promise<number> => {
    if (simulator) return simulator.submitCount;
    const { statuses } = await readReport(s, campaignId, { rows: 0 });
    return [...statuses].filter(([status]) => status !== 'accepted' && status !== 'queued').reduce((n, [, c]) => n + c, 0);
  };
  let count = 0;
  let lastPrint = from;
  while ((count = await reached()) < members) {
    const now = performance.now();
    if (now > deadline) return { done: false, reached: count };
    if (now - lastPrint >= PROGRESS_MS) {
      const rate = (count - last.count) / ((now - last.at) / 1000);
      console.log(
        `  fan-out: ${count} of ${members} submitted, ${Math.round(rate)}/s now, ${Math.round(count / ((now - from) / 1000))}/s overall${rss.enabled ? `, hermod RSS ${Math.round(rss.now() / MB)} MB` : ''}`,
      );
      last = { at: now, count };
      lastPrint = now;
    }
    // Each poll of an external service reads the whole report: about once a second at most.
    await sleep(simulator ? 50 : 1000);
  }
  return { done: true, reached: count };
}
