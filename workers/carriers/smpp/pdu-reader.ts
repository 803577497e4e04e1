import { CommandStatus } from './command-status';
import { PduError } from './pdu-error';
import { NO_TLVS, type Tlv } from './tlv';

/**
 * A cursor over one PDU frame. Decoding is synchronous, so one reader is
 * reused for every frame instead of allocating one each time.
 */
export class PduReader {
  buf: Buffer = Buffer.alloc(0);
  off = 0;
  commandId = 0;
  sequenceNumber = 0;

  reset(frame: Buffer, offset: number, commandId: number, sequenceNumber: number): this {
    this.buf = frame;
    this.off = offset;
    this.commandId = commandId;
    this.sequenceNumber = sequenceNumber;
    return this;
  }

  get remaining(): number {
    return this.buf.length - this.off;
  }

  fail(message: string, status: number = CommandStatus.ESME_RINVCMDLEN): never {
    throw new PduError(status, message, { commandId: this.commandId, sequenceNumber: this.sequenceNumber });
  }

  u8(field: string): number {
    if (this.off + 1 > this.buf.length) this.fail(`PDU ends before ${field}`);
    return this.buf[this.off++]!;
  }

  /** A C-Octet String of at most `max` octets including the NUL. */
  cString(max: number, field: string): string {
    const start = this.off;
    const limit = Math.min(this.buf.length, start + max);
    let i = start;
    while (i < limit && this.buf[i] !== 0) i++;
    if (i >= limit) this.fail(`${field} is not NUL-terminated within ${max} octets`, CommandStatus.ESME_RINVPARLEN);
    this.off = i + 1;
    return i === start ? '' : this.buf.toString('latin1', start, i);
  }

  /** Like cString, but a PDU that ends right here (no body at all) reads as ''. */
  optionalCString(max: number, field: string): string {
    return this.off >= this.buf.length ? '' : this.cString(max, field);
  }

  octets(length: number, field: string): Buffer {
    if (this.off + length > this.buf.length) this.fail(`${field} runs past the end of the PDU`, CommandStatus.ESME_RINVMSGLEN);
    const out = this.buf.subarray(this.off, this.off + length);
    this.off += length;
    return out;
  }

  /** The optional parameters that fill the rest of the PDU. */
  tlvs(): readonly Tlv[] {
    if (this.off >= this.buf.length) return NO_TLVS;
    const out: Tlv[] = [];
    while (this.off < this.buf.length) {
      if (this.buf.length - this.off < 4) this.fail('truncated TLV header', CommandStatus.ESME_RINVOPTPARSTREAM);
      const tag = this.buf.readUInt16BE(this.off);
      const length = this.buf.readUInt16BE(this.off + 2);
      this.off += 4;
      if (this.off + length > this.buf.length) this.fail(`TLV 0x${tag.toString(16)} runs past the end of the PDU`, CommandStatus.ESME_RINVOPTPARSTREAM);
      out.push({ tag, value: this.buf.subarray(this.off, this.off + length) });
      this.off += length;
    }
    return out;
  }
}
