import { describe, expect, it } from 'vitest';
import type { StatusEvent } from '../ports/message-history';
import { imAttemptId, newImMessageId } from '../im/im-ids';
import { imJourney } from './im-journey';

const event = (messageId: string, status: StatusEvent['status'], at: number, detail = ''): StatusEvent => ({
  messageId,
  applicationId: 'a1',
  status,
  at,
  detail,
  carrierId: '',
  errorCode: '',
});

describe("an Intelligent Messaging message's journey", () => {
  it("shows each attempt on its channel, in one piece where it began, even when a carrier stamps its report in whole seconds, and no mark of hermod's own", async () => {
    const id = newImMessageId();
    const t = 1_764_300_000_500;
    const byId = new Map<string, StatusEvent[]>([
      // WhatsApp's webhook says delivered at the start of its second: before the attempt, by the clock.
      [
        imAttemptId(id, 0),
        [event(imAttemptId(id, 0), 'accepted', t + 10), event(imAttemptId(id, 0), 'received', t - 500), event(imAttemptId(id, 0), 'expired', t + 2010)],
      ],
      [imAttemptId(id, 1), [event(imAttemptId(id, 1), 'accepted', t + 2020), event(imAttemptId(id, 1), 'received', t + 2100)]],
    ]);
    const own = [
      { status: 'accepted', at: new Date(t), channel: 'im', carrierId: '', errorCode: '', detail: '', attempt: 0 },
      { status: 'received', at: new Date(t + 2110), channel: 'im', carrierId: '', errorCode: '', detail: 'sms: received', attempt: 0 },
      // hermod's own mark that the message is settled, which repeats its status: no event of the journey.
      { status: 'received', at: new Date(t + 2111), channel: 'im', carrierId: '', errorCode: '', detail: 'im:settled', attempt: 0 },
    ];
    const content = JSON.stringify({ attempts: [{ channel: 'wab', event: 'read', timeout: 2 }, { channel: 'sms' }, { channel: 'email' }] });
    const journey = await imJourney({ listEvents: async (mid) => byId.get(mid) ?? [] }, { id, content }, own);
    expect(journey.attempts).toBe(2);
    expect(journey.events.map((e) => `${e.attempt} ${e.channel} ${e.status}`)).toEqual([
      '0 im accepted',
      '1 wab accepted',
      '1 wab received',
      '1 wab expired',
      '2 sms accepted',
      '2 sms received',
      '0 im received',
    ]);
  });

  it('never shows a WhatsApp report stamped in whole seconds before the stages hermod recorded earlier in that second', async () => {
    const id = newImMessageId();
    const attempt = imAttemptId(id, 0);
    const at = (time: string): number => Date.parse(`2026-11-29T02:${time}Z`);
    // As history returns them, by time: WhatsApp's webhook stamps its reports in whole seconds.
    const list = [
      event(attempt, 'received', at('18:57.000')),
      event(attempt, 'accepted', at('18:57.015')),
      event(attempt, 'queued', at('18:57.016')),
      event(attempt, 'sent', at('18:57.120')),
      event(attempt, 'submitted', at('18:57.480')),
      event(attempt, 'read', at('19:03.000')),
    ];
    const own = [
      { status: 'accepted', at: new Date(at('18:57.010')), channel: 'im', carrierId: '', errorCode: '', detail: '', attempt: 0 },
      { status: 'read', at: new Date(at('19:03.020')), channel: 'im', carrierId: '', errorCode: '', detail: 'wab: read', attempt: 0 },
    ];
    const content = JSON.stringify({ attempts: [{ channel: 'wab', event: 'read', timeout: 60 }] });
    const journey = await imJourney({ listEvents: async (mid) => (mid === attempt ? list : []) }, { id, content }, own);
    expect(journey.events.map((e) => `${e.attempt} ${e.channel} ${e.status} ${e.at!.toISOString().slice(14, 23)}`)).toEqual([
      '0 im accepted 18:57.010',
      '1 wab accepted 18:57.015',
      '1 wab queued 18:57.016',
      '1 wab sent 18:57.120',
      '1 wab submitted 18:57.480',
      '1 wab received 18:57.000',
      '1 wab read 19:03.000',
      '0 im read 19:03.020',
    ]);
  });

  it('is the message’s own events alone when its content is not a plan', async () => {
    const own = [{ status: 'accepted', at: new Date(1), channel: 'im', carrierId: '', errorCode: '', detail: '', attempt: 0 }];
    expect(await imJourney({ listEvents: async () => [] }, { id: newImMessageId(), content: 'Kia ora 👋🏽' }, own)).toEqual({ attempts: 0, events: own });
  });
});
