import type { CampaignsClient } from '../campaigns-client';
import type { ImportCommit, ImportResult, Member } from '../../proto/gen/hermod/v1/campaigns';
import { HermodError } from '../../lib/errors';
import { parseStreamedObject } from '../http/streamed-object';
import { checkNameText } from '../../core/domain/control-characters';
import { checkSmsText } from '../../core/domain/control-characters';
import { checkDestination } from '../../core/domain/destination-problem';
import { createInvalidMembers } from './invalid-members';
import { CAMPAIGN_MANAGER_SCHEMAS } from './schemas';
import { meantField } from '../http/near-miss-fields';

export const MAX_MEMBERS = 1_000_000;
const PARAMS = ['param1', 'param2', 'param3', 'param4', 'param5', 'param6'] as const;

/** The body's fields kept for each kind of import: its schema's, and `members` (to say it is not an array). */
const knownFieldsOf = (schema: 'ListRequestFields' | 'ScheduleCampaignRequestFields'): readonly string[] => [
  ...Object.keys(CAMPAIGN_MANAGER_SCHEMAS[schema].properties),
  'members',
];
/** One array per kind, so meantField's answers for it are kept across requests. */
const KNOWN_FIELDS = { ListRequestFields: knownFieldsOf('ListRequestFields'), ScheduleCampaignRequestFields: knownFieldsOf('ScheduleCampaignRequestFields') };

/** Misspelt field names kept to be named in the refusal. */
const MAX_SLIPS_KEPT = 8;
/**
 * Longest name looked at as a slip: twice the longest field's and some (`S_T_R_I_C_T-…`). A longer one is no
 * slip, and is not kept by meantField's answers either (a thousand 64 KiB names would be 64 MB held).
 */
const MAX_SLIP_LENGTH = 48;

type Validate = <T>(schema: string, value: unknown) => T;

export interface ImportedBody {
  /** The body's fields other than members, validated. */
  fields: Record<string, unknown>;
  result: ImportResult;
}

/**
 * Streams a list or campaign body to core: members are checked one by one as
 * the body is parsed and sent on in batches; the other fields are checked once
 * the body ends, then the import is committed with them. With
 * strict_validation (the default) one invalid member refuses the whole
 * request; without, invalid members are dropped and reported in error_messages.
 * The caller has checked the headers (checkJsonRequest).
 */
export async function importBody(
  body: AsyncIterable<Buffer>,
  deps: { campaigns: CampaignsClient; validate: Validate; maxBytes: number },
  applicationId: string,
  kind: 'list' | 'campaign',
  toCommit: (fields: Record<string, unknown>) => ImportCommit,
): Promise<ImportedBody> {
  const schema = kind === 'list' ? 'ListRequestFields' : 'ScheduleCampaignRequestFields';
  const known = KNOWN_FIELDS[schema];
  let slips = 0;
  const membersSlips: string[] = [];
  const session = deps.campaigns.startImport(applicationId, kind);
  const fields: Record<string, unknown> = {};
  const invalid = createInvalidMembers();
  let valid = 0;
  try {
    const count = await parseStreamedObject(
      body,
      { arrayField: 'members', maxBytes: deps.maxBytes },
      {
        field(name, value) {
          if (known.includes(name)) fields[name] = value;
          // Other fields are let go at once, however many come. A slip of a known one's name (`strict_validaton`) is
          // kept without its value, for validate to refuse; one is enough, a few are named. "__proto__" is a field name.
          else if (slips < MAX_SLIPS_KEPT && name.length <= MAX_SLIP_LENGTH) {
            const meant = meantField(name, known);
            if (meant === undefined) return;
            slips++;
            // `members` is streamed, not in the fields' schema: its slips are named here.
            if (meant === 'members') membersSlips.push(name);
            else Object.defineProperty(fields, name, { value: null, enumerable: true, writable: true, configurable: true });
          }
        },
        async elements(elements, firstIndex) {
          if (firstIndex + elements.length > MAX_MEMBERS) throw new HermodError('invalid_attrib', `members: at most ${MAX_MEMBERS} members`);
          const good: Member[] = [];
          elements.forEach((element, i) => {
            try {
              const m = deps.validate<Record<string, string>>('Member', element);
              // Bare digits are a national number or short code the carrier routes as they are; `+` and `00` are international.
              checkDestination(m.destination!, 'destination', 'national');
              // Parameters go into the SMS text: what a handset cannot show (NUL, ESC…) is refused as in content.
              for (const p of PARAMS) if (m[p] !== undefined) checkSmsText(m[p], p);
              good.push({ destination: m.destination!, params: PARAMS.map((p) => m[p] ?? '') });
            } catch (err) {
              invalid.add(firstIndex + i, element, err);
            }
          });
          valid += good.length;
          if (good.length > 0) await session.write(good);
        },
      },
    );
    if (membersSlips.length > 0) {
      const problems = membersSlips.map((field) => ({ field, description: 'is not a known field; did you mean members?' }));
      throw new HermodError('invalid_attrib', problems.map((p) => `${p.field}: ${p.description}`).join('; '), { fields: problems });
    }
    deps.validate(schema, fields);
    checkNameText(fields.name as string, 'name');
    if (fields.members !== undefined) throw new HermodError('invalid_attrib', 'members: must be an array');
    if (count === 0)
      throw new HermodError(
        Object.hasOwn(fields, 'members') || invalid.count > 0 ? 'invalid_attrib' : 'missing_attrib',
        'members: at least 1 member is required',
      );
    if (invalid.count > 0 && fields.strict_validation !== false) throw new HermodError('invalid_attrib', invalid.describe());
    if (valid === 0) throw new HermodError('invalid_attrib', `no valid members; ${invalid.describe()}`);
    const commit = toCommit(fields);
    if (invalid.count > 0) commit.errorMessages = invalid.describe({ dropped: true });
    return { fields, result: await session.commit(commit) };
  } catch (err) {
    session.abort();
    throw err;
  }
}
