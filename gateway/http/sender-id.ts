/**
 * The schema of a sender id (`source` or `mask`) that goes out over SMS.
 * SMPP carries it in source_addr, a C-octet string of one octet per character,
 * so only U+0001..U+00FF fit; the SMPP writer refuses anything else. Checked
 * at the edge so the caller is told why in the interface's own error shape,
 * instead of a message that is accepted and then ends as rejected.
 */
export function senderIdSchema(maxLength: number) {
  return {
    type: 'string',
    minLength: 1,
    maxLength,
    pattern: '^[\\u0001-\\u00ff]*$',
    'x-problem': 'is not a sender id an SMS can carry: only Latin-1 characters (U+0001 to U+00FF) fit',
  } as const;
}
