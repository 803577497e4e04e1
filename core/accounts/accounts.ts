import { uuid } from '../../lib/uuid';
import type { AccountStore, ApplicationRecord, QuotaPeriod } from '../ports/account-store';
import type { OptOutStore } from '../ports/opt-out-store';
import { HermodError } from '../../lib/errors';
import { replyAddressKey } from '../messages/reply-address';
import { newApiKey } from '../domain/api-key';
import { checkApplicationName, nameAsRead } from '../domain/application-name';
import { sameTypedText } from '../../lib/typed-text';
import { applicationNamed as namedIn } from './application-named';
import { checkClaimedAddress } from '../domain/sender-address';
import { hashApiKey, hashPassword, passwordTag, refusePassword, samePasswordTag, verifyPassword } from './secrets';

interface AppIdentity {
  id: string;
  name: string;
}

/** What an upsert changed that its caller must be told: an overlap of callback secrets a rotation cut short. */
interface UpsertedApplication extends AppIdentity {
  /**
   * A rotation made while the secret an earlier one replaced still signed: that older secret, which signs no more
   * (one secret is kept beside the current one, as Stripe keeps one when a webhook secret is rolled), and until
   * when (epoch ms) it was to sign.
   */
  endedOverlap?: { secret: string; until: number };
  /** A rotation: the secret it replaced (it signs on only with an overlap). */
  replacedSecret?: string;
}

/** Who a password belongs to, and the tag of the stored password it was checked against (secrets.ts passwordTag). */
interface BasicIdentity extends AppIdentity {
  passwordTag: string;
}

interface CallbackSettings {
  statusCallbackUrl: string;
  replyCallbackUrl: string;
  imStatusCallbackUrl: string;
  callbackSecret: string;
  /** The secret callbackSecret replaced, signing beside it until `previousCallbackSecretUntil` (epoch ms; 0: it does not). */
  previousCallbackSecret: string;
  previousCallbackSecretUntil: number;
  /** Intelligent Messaging default attempts ('' : the service default). */
  imDefaultAttempts: string;
  /** Intelligent Messaging requests per second; -1: the service default; 0: no limit. */
  imRateLimit: number;
  /** Messages per period; undefined: no quota. */
  quota: Quota | undefined;
}

export interface Quota {
  messages: number;
  period: Exclude<QuotaPeriod, ''>;
}

interface UpsertInput {
  name: string;
  password?: string;
  apiKey?: string;
  revokeApiKey?: boolean;
  /** undefined: keep; '' : remove. */
  statusCallbackUrl?: string;
  replyCallbackUrl?: string;
  imStatusCallbackUrl?: string;
  imDefaultAttempts?: string;
  /** New signing secret for callbacks. */
  callbackSecret?: string;
  /** With a new callbackSecret: how long the one it replaces keeps signing beside it (0 or absent: it stops at once). */
  previousSecretValidMs?: number;
  /** undefined: keep; []: none. Refused when one is no address a send could use, or another application claims one of them. */
  sourceAddresses?: readonly string[];
  /** undefined: keep; -1: the service default. */
  imRateLimit?: number;
  /** undefined: keep; null: no quota. */
  quota?: Quota | null;
}

export interface Accounts {
  authenticateBasic(name: string, password: string): Promise<BasicIdentity | undefined>;
  /** A password checked before against the stored password `tag` names: the application while that is still its password. */
  recheckBasic(name: string, tag: string): Promise<BasicIdentity | undefined>;
  authenticateApiKey(key: string): Promise<AppIdentity | undefined>;
  /** Creates the application or updates it; empty secrets leave the current ones. */
  upsert(input: UpsertInput): Promise<UpsertedApplication>;
  /** The application's callback settings (cached briefly: they are read for every callback). */
  callbackSettings(applicationId: string): Promise<CallbackSettings | undefined>;
  /**
   * The settings as cached now, without waiting: `known` is false when they are
   * not cached (or too old), and a read is started so the next peek knows.
   */
  peekCallbackSettings(applicationId: string): { known: true; value: CallbackSettings | undefined } | { known: false };
  /** Told after this core changed an application's settings, so what caches them in front of callbackSettings drops them at once. */
  onSettingsChanged(listener: (applicationId: string) => void): void;
  /** Called with a new application's id before upsert returns it. */
  onCreated(listener: (applicationId: string) => Promise<void>): void;
  list(): Promise<
    {
      id: string;
      name: string;
      hasPassword: boolean;
      hasApiKey: boolean;
      sourceAddresses: readonly string[];
      imRateLimit: number;
      quota: Quota | undefined;
      /** Until when (RFC 3339) the secret a rotation replaced still signs beside the current one; '' : none does. */
      previousCallbackSecretUntil: string;
    }[]
  >;
  /** The application that claims this address (a replyAddressKey), if one does. */
  ownerOfAddress(addressKey: string): Promise<string | undefined>;
  /** Handsets opted out of one application (by name) or of all. */
  listOptOuts(applicationName?: string): Promise<{ applicationName: string; handset: string; at: number }[]>;
}

const SETTINGS_CACHE_MS = 10_000;

/**
 * What signs beside the callback secret after an upsert: a rotation with an
 * overlap keeps the secret it replaces until then; one without ends any
 * overlap; anything else leaves it as it is.
 */
function previousSecret(
  input: Pick<UpsertInput, 'callbackSecret' | 'previousSecretValidMs'>,
  current: Pick<ApplicationRecord, 'callbackSecret' | 'previousCallbackSecret' | 'previousCallbackSecretUntil'> | undefined,
): Pick<ApplicationRecord, 'previousCallbackSecret' | 'previousCallbackSecretUntil'> {
  if (!input.callbackSecret) {
    return { previousCallbackSecret: current?.previousCallbackSecret ?? '', previousCallbackSecretUntil: current?.previousCallbackSecretUntil ?? 0 };
  }
  const validMs = input.previousSecretValidMs ?? 0;
  if (validMs <= 0 || !current?.callbackSecret) return { previousCallbackSecret: '', previousCallbackSecretUntil: 0 };
  return { previousCallbackSecret: current.callbackSecret, previousCallbackSecretUntil: Date.now() + validMs };
}

export function createAccounts(deps: { applications: AccountStore; optOuts: OptOutStore }): Accounts {
  const settings = new Map<string, { value: CallbackSettings | undefined; expires: number }>();
  /** Applications whose settings a peek is reading. */
  const reading = new Set<string>();
  /** Bumped by every upsert: a read that started before one does not cache what it read. */
  let generation = 0;
  const applicationNamed = (name: string) => namedIn(deps.applications, name);
  const changeListeners: ((applicationId: string) => void)[] = [];
  const createdListeners: ((applicationId: string) => Promise<void>)[] = [];
  // Address key → application id, of every claim; read for every reply and every send, so cached like the
  // settings, and read once for all who ask while it is read (sends at thousands a second would each read it).
  let owners: { value: Map<string, string>; expires: number } | undefined;
  let readingOwners: Promise<Map<string, string>> | undefined;
  const forgetOwners = (): void => {
    owners = undefined;
    readingOwners = undefined;
  };
  const claims = async (): Promise<Map<string, string>> => {
    if (owners && owners.expires > Date.now()) return owners.value;
    if (readingOwners) return readingOwners;
    // Read by the closure below, which gets past its first await only once this is set.
    let reading!: Promise<Map<string, string>>;
    reading = (async () => {
      const value = new Map<string, string>();
      for (const a of await deps.applications.listApplications()) for (const address of a.sourceAddresses) value.set(replyAddressKey(address), a.id);
      // Kept unless a change forgot the claims while this read ran.
      if (readingOwners === reading) owners = { value, expires: Date.now() + SETTINGS_CACHE_MS };
      return value;
    })().finally(() => {
      if (readingOwners === reading) readingOwners = undefined;
    });
    readingOwners = reading;
    return reading;
  };
  const callbackSettings = async (applicationId: string): Promise<CallbackSettings | undefined> => {
    const hit = settings.get(applicationId);
    if (hit && hit.expires > Date.now()) return hit.value;
    const started = generation;
    const app = (await deps.applications.listApplications()).find((a) => a.id === applicationId);
    const value = app
      ? {
          statusCallbackUrl: app.statusCallbackUrl,
          replyCallbackUrl: app.replyCallbackUrl,
          imStatusCallbackUrl: app.imStatusCallbackUrl,
          callbackSecret: app.callbackSecret,
          previousCallbackSecret: app.previousCallbackSecret ?? '',
          previousCallbackSecretUntil: app.previousCallbackSecretUntil ?? 0,
          imDefaultAttempts: app.imDefaultAttempts,
          imRateLimit: app.imRateLimit,
          quota: quotaOf(app),
        }
      : undefined;
    if (started === generation) settings.set(applicationId, { value, expires: Date.now() + SETTINGS_CACHE_MS });
    return value;
  };
  return {
    async ownerOfAddress(addressKey) {
      return (await claims()).get(addressKey);
    },
    peekCallbackSettings(applicationId) {
      const hit = settings.get(applicationId);
      if (hit && hit.expires > Date.now()) return { known: true, value: hit.value };
      if (!reading.has(applicationId)) {
        reading.add(applicationId);
        void callbackSettings(applicationId)
          .catch(() => undefined)
          .finally(() => reading.delete(applicationId));
      }
      return { known: false };
    },
    callbackSettings,
    onCreated(listener) {
      createdListeners.push(listener);
    },
    onSettingsChanged(listener) {
      changeListeners.push(listener);
    },
    async authenticateBasic(name, password) {
      const app = await applicationNamed(name);
      // NFC first, as passwords are kept now; the forms as typed for ones kept before.
      const tries = [...new Set([password.normalize('NFC'), password, password.normalize('NFD')])];
      if (!app?.passwordHash) {
        // As long as a wrong password takes, so timing tells no names.
        for (const typed of tries) await refusePassword(typed);
        return undefined;
      }
      for (const typed of tries) {
        if (await verifyPassword(typed, app.passwordHash)) return { id: app.id, name: app.name, passwordTag: passwordTag(app.passwordHash) };
      }
      return undefined;
    },
    async recheckBasic(name, tag) {
      const app = await applicationNamed(name);
      if (!app?.passwordHash || !samePasswordTag(tag, app.passwordHash)) return undefined;
      return { id: app.id, name: app.name, passwordTag: tag };
    },
    async authenticateApiKey(key) {
      const app = await deps.applications.getApplicationByApiKeyHash(hashApiKey(key));
      return app ? { id: app.id, name: app.name } : undefined;
    },
    async upsert(input) {
      const current = await applicationNamed(input.name);
      // Checked when an application is made: one stored before names were checked can still be changed (and use its API key).
      if (!current) {
        checkApplicationName(input.name.normalize('NFC'));
        const read = nameAsRead(input.name);
        const alike = (await deps.applications.listApplications()).find((a) => nameAsRead(a.name) === read);
        if (alike) {
          throw new HermodError(
            'conflict',
            `an application named ${JSON.stringify(alike.name)} exists; ${JSON.stringify(input.name)} differs from it only in case or width`,
            {
              fields: [{ field: 'name', description: 'a name not alike an existing application’s' }],
            },
          );
        }
      }
      // A new application's name is kept in one form (NFC); one stored as typed before keeps its name.
      const name = current?.name ?? input.name.normalize('NFC');
      if (input.sourceAddresses) {
        // Every address first: a line with one bad address changes none of the claims.
        for (const address of input.sourceAddresses) checkClaimedAddress(address);
        forgetOwners();
        const claimed = await claims();
        for (const address of input.sourceAddresses) {
          const owner = claimed.get(replyAddressKey(address));
          if (owner && owner !== current?.id)
            throw new HermodError('conflict', `${address} is already claimed by another application`, {
              fields: [{ field: 'source_addresses', description: `${address} belongs to another application` }],
            });
        }
      }
      const record = {
        id: current?.id ?? uuid(),
        name,
        passwordHash: input.password ? await keepOrRehash(input.password.normalize('NFC'), current?.passwordHash) : (current?.passwordHash ?? ''),
        apiKeyHash: input.revokeApiKey ? '' : input.apiKey ? hashApiKey(input.apiKey) : (current?.apiKeyHash ?? ''),
        statusCallbackUrl: input.statusCallbackUrl ?? current?.statusCallbackUrl ?? '',
        replyCallbackUrl: input.replyCallbackUrl ?? current?.replyCallbackUrl ?? '',
        imStatusCallbackUrl: input.imStatusCallbackUrl ?? current?.imStatusCallbackUrl ?? '',
        imDefaultAttempts: input.imDefaultAttempts ?? current?.imDefaultAttempts ?? '',
        sourceAddresses: input.sourceAddresses ?? current?.sourceAddresses ?? [],
        imRateLimit: input.imRateLimit ?? current?.imRateLimit ?? -1,
        ...(input.quota === undefined
          ? { quotaMessages: current?.quotaMessages ?? 0, quotaPeriod: current?.quotaPeriod ?? '' }
          : input.quota === null
            ? { quotaMessages: 0, quotaPeriod: '' as const }
            : { quotaMessages: input.quota.messages, quotaPeriod: input.quota.period }),
        // Every application gets a signing secret; operators can replace it.
        callbackSecret: input.callbackSecret || current?.callbackSecret || newApiKey(),
        ...previousSecret(input, current),
        updatedAt: Date.now(),
      };
      await deps.applications.upsertApplication(record);
      generation += 1;
      settings.delete(record.id);
      forgetOwners();
      for (const listener of changeListeners) listener(record.id);
      if (!current) for (const listener of createdListeners) await listener(record.id);
      const overlapRan = input.callbackSecret && current?.previousCallbackSecret && current.previousCallbackSecretUntil > Date.now();
      return {
        id: record.id,
        name: record.name,
        ...(overlapRan ? { endedOverlap: { secret: current.previousCallbackSecret, until: current.previousCallbackSecretUntil } } : {}),
        ...(input.callbackSecret && current?.callbackSecret ? { replacedSecret: current.callbackSecret } : {}),
      };
    },
    async listOptOuts(applicationName) {
      const apps = await deps.applications.listApplications();
      const byId = new Map(apps.map((a) => [a.id, a.name]));
      const app = applicationName ? apps.find((a) => sameTypedText(a.name, applicationName)) : undefined;
      if (applicationName && !app) return [];
      const optOuts = await deps.optOuts.listOptOuts(app?.id);
      return optOuts.map((o) => ({ applicationName: byId.get(o.applicationId) ?? o.applicationId, handset: o.handset, at: o.at }));
    },
    async list() {
      return (await deps.applications.listApplications()).map((a) => ({
        id: a.id,
        name: a.name,
        hasPassword: a.passwordHash !== '',
        hasApiKey: a.apiKeyHash !== '',
        sourceAddresses: a.sourceAddresses,
        imRateLimit: a.imRateLimit,
        quota: quotaOf(a),
        statusCallbackUrl: withPasswordMasked(a.statusCallbackUrl),
        replyCallbackUrl: withPasswordMasked(a.replyCallbackUrl),
        imStatusCallbackUrl: withPasswordMasked(a.imStatusCallbackUrl),
        previousCallbackSecretUntil: a.previousCallbackSecretUntil > Date.now() ? new Date(a.previousCallbackSecretUntil).toISOString() : '',
      }));
    },
  };
}

/** A callback URL as operators may see it listed: a password it carries (https://user:pass@host/…) is not shown. */
function withPasswordMasked(url: string): string {
  if (!url) return '';
  try {
    const parsed = new URL(url);
    if (!parsed.password) return url;
    parsed.password = '***';
    return parsed.href;
  } catch {
    return url;
  }
}

/** A restart with the same bootstrap password keeps the stored hash (if of the current form) instead of writing a new one. */
async function keepOrRehash(password: string, currentHash: string | undefined): Promise<string> {
  if (currentHash?.startsWith('scrypt2$') && (await verifyPassword(password, currentHash))) return currentHash;
  return hashPassword(password);
}

function quotaOf(app: { quotaMessages: number; quotaPeriod: QuotaPeriod }): Quota | undefined {
  return app.quotaMessages > 0 && app.quotaPeriod !== '' ? { messages: app.quotaMessages, period: app.quotaPeriod } : undefined;
}

/** A quota as an operator gives it: a whole number of messages (1..10^12) per hour, day or month. */
export function checkQuota(messages: number, period: string): Quota {
  if (!Number.isSafeInteger(messages) || messages < 1 || messages > 1e12)
    throw new HermodError('invalid_attrib', `a quota is a whole number of messages, 1..10^12 (got ${messages})`);
  if (period !== 'hour' && period !== 'day' && period !== 'month')
    throw new HermodError('invalid_attrib', `a quota period is hour, day or month (got ${JSON.stringify(period)})`);
  return { messages, period };
}
