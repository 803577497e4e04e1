import { toUsvString } from '../usv-string';
import type { WebhookInbound } from './webhook-handler';

const MEDIA_TYPES = new Set(['image', 'video', 'audio', 'document', 'sticker']);

/**
 * The handsets' messages in a Cloud API webhook
 * (`entry[].changes[field=messages].value.messages[]`), as MO messages: from
 * `from` (a WhatsApp id, the number without its plus) to the business number
 * of `value.metadata.display_phone_number` (with its `phone_number_id` as the
 * business id), under the message's `wamid` id, quoting the message of
 * `context.id` when the handset replied to one (swiped to reply, or tapped a
 * button of it).
 * What they say: a text's body; an interactive reply's button or list-row
 * title; a template quick-reply button's text; for media (image, video,
 * audio, document, sticker) a reference `[image <media id> <mime type>]`
 * followed by the caption (the media itself is fetched from the Graph API
 * by id); a location as `[location <lat>,<long>]` and its name and address.
 * Reactions, system messages, `unsupported` and anything unknown are skipped.
 * Half of a surrogate pair (JSON `"\ud83d"` alone) in any of its texts is
 * U+FFFD, as a USVString has it.
 */
export function whatsAppInbound(body: unknown): WebhookInbound[] {
  const messages: WebhookInbound[] = [];
  if (!isRecord(body) || body.object !== 'whatsapp_business_account') return messages;
  for (const entry of records(body.entry)) {
    for (const change of records(entry.changes)) {
      if (change.field !== 'messages' || !isRecord(change.value)) continue;
      const metadata = isRecord(change.value.metadata) ? change.value.metadata : {};
      const destination = e164(metadata.display_phone_number);
      if (!destination) continue;
      const businessId = typeof metadata.phone_number_id === 'string' ? toUsvString(metadata.phone_number_id) : '';
      for (const m of records(change.value.messages)) {
        const source = e164(m.from);
        const text = textOf(m);
        if (!source || text === undefined || typeof m.id !== 'string' || !m.id) continue;
        const seconds = Number(m.timestamp);
        const at = Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : Date.now();
        const quotedRef = isRecord(m.context) && typeof m.context.id === 'string' ? toUsvString(m.context.id) : '';
        messages.push({ source, destination, text: toUsvString(text), at, carrierRef: toUsvString(m.id), businessId, quotedRef });
      }
    }
  }
  return messages;
}

function textOf(m: Record<string, unknown>): string | undefined {
  const type = typeof m.type === 'string' ? m.type : '';
  const part = isRecord(m[type]) ? (m[type] as Record<string, unknown>) : undefined;
  if (!part) return undefined;
  if (type === 'text') return nonEmpty(part.body);
  if (type === 'button') return nonEmpty(part.text) ?? nonEmpty(part.payload);
  if (type === 'interactive') {
    const reply = typeof part.type === 'string' && isRecord(part[part.type]) ? (part[part.type] as Record<string, unknown>) : undefined;
    return reply ? (nonEmpty(reply.title) ?? nonEmpty(reply.id)) : undefined;
  }
  if (MEDIA_TYPES.has(type)) {
    const id = nonEmpty(part.id);
    if (!id) return undefined;
    const mime = nonEmpty(part.mime_type);
    const caption = nonEmpty(part.caption) ?? nonEmpty(part.filename);
    return `[${type} ${id}${mime ? ` ${mime}` : ''}]${caption ? ` ${caption}` : ''}`;
  }
  if (type === 'location' && typeof part.latitude === 'number' && typeof part.longitude === 'number') {
    const words = [nonEmpty(part.name), nonEmpty(part.address)].filter(Boolean).join(', ');
    return `[location ${part.latitude},${part.longitude}]${words ? ` ${words}` : ''}`;
  }
  return undefined;
}

/** A WhatsApp id or display number (digits, perhaps with a plus, spaces or dashes) as E.164; '' when it is not one. */
function e164(v: unknown): string {
  if (typeof v !== 'string') return '';
  const digits = v.replace(/[\s\-().]/g, '').replace(/^\+/, '');
  return /^[1-9]\d{5,14}$/.test(digits) ? `+${digits}` : '';
}

const nonEmpty = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() ? v : undefined);
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const records = (v: unknown): Record<string, unknown>[] => (Array.isArray(v) ? v.filter(isRecord) : []);
