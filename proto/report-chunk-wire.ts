import { CampaignsService, ReportChunk } from './gen/hermod/v1/campaigns';

/**
 * ReportChunk's wire form written and read directly: one field, 3
 * (json_rows), length-delimited. A million-row report is about 200 MB of
 * text; the generated encoder grows a buffer by doubling, slices it and
 * copies it into a Buffer (about five allocations the size of each chunk),
 * and the generated decoder copies the bytes out of the message, which made
 * garbage collection most of the report's cost in core and the gateway.
 * Written here with one copy, and read as a view of the received message.
 * The bytes are the generated code's, both ways.
 */
export function serializeReportChunk(chunk: ReportChunk): Buffer {
  const bytes = chunk.jsonRows;
  if (bytes.length === 0) return Buffer.alloc(0);
  const head = [0x1a]; // field 3, wire type 2
  let n = bytes.length;
  while (n >= 0x80) {
    head.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  head.push(n);
  const out = Buffer.allocUnsafe(head.length + bytes.length);
  out.set(head, 0);
  out.set(bytes, head.length);
  return out;
}

/** A chunk that is json_rows alone is read as a view of `wire`; anything else by the generated decoder. */
export function deserializeReportChunk(wire: Buffer): ReportChunk {
  if (wire[0] === 0x1a) {
    let length = 0;
    let pos = 1;
    for (let shift = 0; pos < wire.length && shift < 35; shift += 7) {
      const b = wire[pos++]!;
      length += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) {
        if (pos + length === wire.length) return { jsonRows: wire.subarray(pos) };
        break;
      }
    }
  }
  return ReportChunk.decode(wire);
}

/** The Campaigns service definition with the report's chunks written and read as above. */
export const CampaignsServiceWithReportWire = {
  ...CampaignsService,
  streamCampaignReport: { ...CampaignsService.streamCampaignReport, responseSerialize: serializeReportChunk, responseDeserialize: deserializeReportChunk },
};
