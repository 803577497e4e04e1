/** Optional parameters (TLVs) of SMPP 3.4 (section 5.3.2): tag, length, value. */
export interface Tlv {
  tag: number;
  value: Buffer;
}

export const TlvTag = {
  dest_addr_subunit: 0x0005,
  payload_type: 0x0019,
  receipted_message_id: 0x001e,
  ms_msg_wait_facilities: 0x0030,
  privacy_indicator: 0x0201,
  user_message_reference: 0x0204,
  user_response_code: 0x0205,
  source_port: 0x020a,
  destination_port: 0x020b,
  sar_msg_ref_num: 0x020c,
  language_indicator: 0x020d,
  sar_total_segments: 0x020e,
  sar_segment_seqnum: 0x020f,
  sc_interface_version: 0x0210,
  callback_num: 0x0381,
  network_error_code: 0x0423,
  message_payload: 0x0424,
  delivery_failure_reason: 0x0425,
  more_messages_to_send: 0x0426,
  message_state: 0x0427,
} as const;

/** Shared empty list so PDUs without TLVs allocate nothing for them. */
export const NO_TLVS: readonly Tlv[] = Object.freeze([]);

export function findTlv(tlvs: readonly Tlv[] | undefined, tag: number): Tlv | undefined {
  if (!tlvs) return undefined;
  for (let i = 0; i < tlvs.length; i++) if (tlvs[i]!.tag === tag) return tlvs[i];
  return undefined;
}

/** An unsigned integer TLV (1, 2 or 4 octets, big-endian). */
export function tlvUint(tlvs: readonly Tlv[] | undefined, tag: number): number | undefined {
  const tlv = findTlv(tlvs, tag);
  if (!tlv) return undefined;
  const v = tlv.value;
  switch (v.length) {
    case 1:
      return v[0];
    case 2:
      return v.readUInt16BE(0);
    case 4:
      return v.readUInt32BE(0);
    default:
      return undefined;
  }
}

/** A C-Octet String TLV, without its terminating NUL. */
export function tlvCString(tlvs: readonly Tlv[] | undefined, tag: number): string | undefined {
  const tlv = findTlv(tlvs, tag);
  if (!tlv) return undefined;
  const nul = tlv.value.indexOf(0);
  return tlv.value.toString('latin1', 0, nul < 0 ? tlv.value.length : nul);
}

export function uint8Tlv(tag: number, value: number): Tlv {
  return { tag, value: Buffer.of(value & 0xff) };
}

export function uint16Tlv(tag: number, value: number): Tlv {
  return { tag, value: Buffer.of((value >>> 8) & 0xff, value & 0xff) };
}

export function cStringTlv(tag: number, value: string): Tlv {
  const buf = Buffer.alloc(value.length + 1);
  buf.write(value, 0, 'latin1');
  return { tag, value: buf };
}

/** The three sar_* TLVs that mark one part of a concatenated message. */
export function sarTlvs(ref: number, total: number, seq: number): Tlv[] {
  return [uint16Tlv(TlvTag.sar_msg_ref_num, ref), uint8Tlv(TlvTag.sar_total_segments, total), uint8Tlv(TlvTag.sar_segment_seqnum, seq)];
}
