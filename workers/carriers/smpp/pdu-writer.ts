import { CommandStatus } from './command-status';
import { PduError } from './pdu-error';

/**
 * A growable output buffer that many PDUs are encoded into back to back, so
 * a whole tick's worth of PDUs leaves in one socket write. `take()` copies
 * the bytes out (one allocation per flush, none per PDU) and starts over.
 */
export class PduWriter {
  private buf: Buffer;
  private len = 0;

  constructor(initialSize = 16 * 1024) {
    this.buf = Buffer.allocUnsafe(initialSize);
  }

  get length(): number {
    return this.len;
  }

  private reserve(n: number): void {
    const need = this.len + n;
    if (need <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < need) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.len);
    this.buf = next;
  }

  u8(value: number): void {
    this.reserve(1);
    this.buf[this.len++] = value & 0xff;
  }

  u16(value: number): void {
    this.reserve(2);
    this.buf.writeUInt16BE(value & 0xffff, this.len);
    this.len += 2;
  }

  u32(value: number): void {
    this.reserve(4);
    this.buf.writeUInt32BE(value >>> 0, this.len);
    this.len += 4;
  }

  /** A C-Octet String: latin1 bytes then NUL; `max` counts the NUL, as the spec does. */
  cString(value: string, max: number, field: string): void {
    if (value.length + 1 > max) {
      throw new PduError(CommandStatus.ESME_RINVPARLEN, `${field} is longer than ${max - 1} characters`);
    }
    this.reserve(value.length + 1);
    const buf = this.buf;
    let o = this.len;
    // Addresses and ids are short: a loop beats a call into Buffer#write.
    for (let i = 0; i < value.length; i++) {
      const c = value.charCodeAt(i);
      // One octet per character: a NUL would end the field early and a code above 0xFF would lose its high bits.
      if (c === 0 || c > 0xff)
        throw new PduError(CommandStatus.ESME_RINVPARLEN, `${field} holds ${JSON.stringify(value[i])}, which a C-octet string cannot carry`);
      buf[o++] = c;
    }
    buf[o++] = 0;
    this.len = o;
  }

  octets(value: Uint8Array): void {
    this.reserve(value.length);
    this.buf.set(value, this.len);
    this.len += value.length;
  }

  /** Overwrites a 32-bit field written earlier (used for command_length). */
  patchU32(offset: number, value: number): void {
    this.buf.writeUInt32BE(value >>> 0, offset);
  }

  /** Drops everything written after `offset` (a PDU that failed half way). */
  truncate(offset: number): void {
    if (offset < this.len) this.len = offset;
  }

  /** The bytes written so far, copied into a Buffer of their own; the writer is emptied. */
  take(): Buffer {
    const out = Buffer.allocUnsafe(this.len);
    this.buf.copy(out, 0, 0, this.len);
    this.len = 0;
    return out;
  }
}
