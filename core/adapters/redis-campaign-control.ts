import type { CampaignControlState, HotState } from '../ports/state';
import type { RedisClient } from './redis-connection';

type CampaignControl = Pick<HotState, 'setCampaignControl' | 'campaignControls' | 'parkCampaignMessages'>;

/** Campaigns outlive messages: their controls and parked messages are kept this long (core restores controls from history at start). */
const CONTROL_TTL_SECONDS = 90 * 24 * 60 * 60;

/**
 * KEYS[1] control, KEYS[2] parked set (one hash slot); ARGV: control, ttl.
 * Moving away from paused hands back and forgets the parked messages in the
 * same step, so a worker's park lands either before it (and is handed back)
 * or after it (and sees the new control).
 */
const SET_CONTROL_LUA = `
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
if ARGV[1] == 'paused' then return {} end
local ids = redis.call('SMEMBERS', KEYS[2])
redis.call('DEL', KEYS[2])
return ids
`;

/** KEYS[1] control, KEYS[2] parked set; ARGV: ttl, message ids. Parks only while paused; returns the control. */
const PARK_LUA = `
local control = redis.call('GET', KEYS[1]) or 'running'
if control ~= 'paused' then return control end
for i = 2, #ARGV do redis.call('SADD', KEYS[2], ARGV[i]) end
redis.call('EXPIRE', KEYS[2], ARGV[1])
return control
`;

interface ControlClient {
  hermodSetCampaignControl(controlKey: string, parkedKey: string, control: string, ttl: number): Promise<string[]>;
  hermodParkCampaignMessages(controlKey: string, parkedKey: string, ttl: number, ...ids: string[]): Promise<string>;
}

const asControl = (value: string | null | undefined): CampaignControlState => (value === 'paused' || value === 'cancelled' ? value : 'running');

/**
 * Campaign controls of the Redis hot state: `<prefix>:campaign:{<id>}:control`
 * holds running, paused or cancelled, and `<prefix>:campaign:{<id>}:parked`
 * the ids of messages workers took off their topic while it was paused. Both
 * keys of a campaign share a hash slot, so each script runs on one node.
 */
export function createRedisCampaignControl(
  client: RedisClient,
  prefix: string,
  each: <T>(what: string, commands: (() => Promise<T>)[]) => Promise<T[]>,
  write: <T>(what: string, keys: string[], commands: (() => Promise<T>)[]) => Promise<T[]>,
  open: () => void,
): CampaignControl {
  client.defineCommand('hermodSetCampaignControl', { numberOfKeys: 2, lua: SET_CONTROL_LUA });
  client.defineCommand('hermodParkCampaignMessages', { numberOfKeys: 2, lua: PARK_LUA });
  const scripted = client as unknown as ControlClient;
  const controlKey = (id: number): string => `${prefix}:campaign:{${id}}:control`;
  const parkedKey = (id: number): string => `${prefix}:campaign:{${id}}:parked`;
  return {
    async setCampaignControl(campaignId, control) {
      open();
      const [ids] = await write(
        'setting a campaign control',
        [controlKey(campaignId)],
        [() => scripted.hermodSetCampaignControl(controlKey(campaignId), parkedKey(campaignId), control, CONTROL_TTL_SECONDS)],
      );
      return (ids ?? []).map(String);
    },
    async campaignControls(campaignIds) {
      open();
      if (campaignIds.length === 0) return [];
      const values = await each(
        'reading campaign controls',
        campaignIds.map((id) => () => client.get(controlKey(id))),
      );
      return values.map(asControl);
    },
    async parkCampaignMessages(campaignId, messageIds) {
      open();
      const [control] = await write(
        'parking campaign messages',
        [parkedKey(campaignId)],
        [() => scripted.hermodParkCampaignMessages(controlKey(campaignId), parkedKey(campaignId), CONTROL_TTL_SECONDS, ...messageIds)],
      );
      return asControl(control);
    },
  };
}
