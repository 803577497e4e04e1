import type { CampaignsClient } from '../campaigns-client';
import type { ImportCommit, ImportResult, Member } from '../../proto/gen/hermod/v1/campaigns';
import { HermodError, toHermodError } from '../../lib/errors';
import { parseStreamedObject } from '../http/streamed-object';
import { checkNameText } from '../../core/domain/control-characters';
import { checkSmsText } from '../../core/domain/control-characters';

export const MAX_MEMBERS = 1_000_000;
/** Problems listed in an answer; the rest are counted. */
const MAX_LISTED = 10;
const PARAMS = ['param1', 'param2', 'param3', 'param4', 'param5', 'param6'] as const;

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
  const session = deps.campaigns.startImport(applicationId, kind);
  const fields: Record<string, unknown> = {};
  const problems: string[] = [];
  let invalid = 0;
  let valid = 0;
  try {
    const count = await parseStreamedObject(
      body,
      { arrayField: 'members', maxBytes: deps.maxBytes },
      {
        field(name, value) {
          fields[name] = value;
        },
        async elements(elements, firstIndex) {
          if (firstIndex + elements.length > MAX_MEMBERS) throw new HermodError('invalid_attrib', `members: at most ${MAX_MEMBERS} members`);
          const good: Member[] = [];
          elements.forEach((element, i) => {
            try {
              const m = deps.validate<Record<string, string>>('Member', element);
              // Parameters go into the SMS text: what a handset cannot show (NUL, ESC…) is refused as in content.
              for (const p of PARAMS) if (m[p] !== undefined) checkSmsText(m[p], p);
              good.push({ destination: m.destination!, params: PARAMS.map((p) => m[p] ?? '') });
            } catch (err) {
              invalid++;
              if (problems.length < MAX_LISTED) problems.push(memberProblem(err, firstIndex + i));
            }
          });
          valid += good.length;
          if (good.length > 0) await session.write(good);
        },
      },
    );
    const schema = kind === 'list' ? 'ListRequestFields' : 'ScheduleCampaignRequestFields';
    deps.validate(schema, fields);
    checkNameText(fields.name as string, 'name');
    if (fields.members !== undefined) throw new HermodError('invalid_attrib', 'members: must be an array');
    if (count === 0)
      throw new HermodError(
        Object.hasOwn(fields, 'members') || problems.length > 0 ? 'invalid_attrib' : 'missing_attrib',
        'members: at least 1 member is required',
      );
    const described = `${invalid} invalid member${invalid === 1 ? '' : 's'}: ${problems.join('; ')}${invalid > problems.length ? '; …' : ''}`;
    if (invalid > 0 && fields.strict_validation !== false) throw new HermodError('invalid_attrib', described);
    if (valid === 0) throw new HermodError('invalid_attrib', `no valid members; ${described}`);
    const commit = toCommit(fields);
    if (invalid > 0) commit.errorMessages = `${described.replace(/^(\d+ invalid members?)/, '$1 dropped')}`;
    return { fields, result: await session.commit(commit) };
  } catch (err) {
    session.abort();
    throw err;
  }
}

/** A member's problems with their paths from the body (`members[3].param1: …`), as the validator writes paths. */
function memberProblem(err: unknown, index: number): string {
  const e = toHermodError(err);
  const at = `members[${index}]`;
  if (e.fields.length === 0) return `${at}: ${e.message}`;
  return e.fields.map((f) => `${f.field === '(body)' ? at : `${at}.${f.field}`}: ${f.description}`).join('; ');
}
