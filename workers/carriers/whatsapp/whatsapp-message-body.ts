import type { OutboundJob } from '../../../core/ports/bus-payloads';

export type WhatsAppMediaKind = 'image' | 'video' | 'audio' | 'document';

/** The Cloud API media type for a MIME type; anything not image, video or audio goes as a document. */
export function mediaKind(mimeType: string): WhatsAppMediaKind {
  const top = mimeType.split('/')[0]!.trim().toLowerCase();
  return top === 'image' || top === 'video' || top === 'audio' ? top : 'document';
}

/**
 * The body of `POST /{version}/{phone-number-id}/messages` for a job. A media
 * job's content is its URL unless the caller gave a text; only a real text
 * becomes the caption (audio takes none).
 */
export function whatsAppMessageBody(job: OutboundJob): Record<string, unknown> {
  const base = { messaging_product: 'whatsapp', recipient_type: 'individual', to: job.destination.replace(/^\+/, '') };
  const im = job.im;
  if (im?.type === 'media' && im.media) {
    const kind = mediaKind(im.media.mimeType);
    const caption = kind !== 'audio' && job.content && job.content !== im.media.url ? { caption: job.content } : {};
    return { ...base, type: kind, [kind]: { link: im.media.url, ...caption } };
  }
  if (im?.type === 'template' && im.template) {
    const t = im.template;
    const parameters = t.parameters.map((p) => ({ type: 'text', parameter_name: p.name, text: p.text }));
    const components = parameters.length ? { components: [{ type: 'body', parameters }] } : {};
    return { ...base, type: 'template', template: { name: t.name, language: { code: t.language }, ...components } };
  }
  return { ...base, type: 'text', text: { body: job.content, preview_url: false } };
}
