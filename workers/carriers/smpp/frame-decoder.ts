import { CommandStatus } from './command-status';
import { DEFAULT_MAX_PDU_LENGTH, HEADER_LENGTH } from './pdu';
import { PduError } from './pdu-error';

/**
 * Cuts a TCP byte stream into SMPP frames. A chunk may hold part of a PDU,
 * several PDUs, or both; frames are handed out as views into the chunk (no
 * copy) and only an incomplete tail is kept for the next chunk. A
 * command_length below the header size or above `maxLength` cannot be
 * resynchronised from, so it throws and the connection should be dropped.
 */
export class FrameDecoder {
  private pending: Buffer | undefined;

  constructor(private readonly maxLength = DEFAULT_MAX_PDU_LENGTH) {}

  /** Bytes held back waiting for the rest of a frame. */
  get buffered(): number {
    return this.pending?.length ?? 0;
  }

  push(chunk: Buffer, onFrame: (frame: Buffer) => void): void {
    let buf = chunk;
    if (this.pending) {
      buf = Buffer.concat([this.pending, chunk], this.pending.length + chunk.length);
      this.pending = undefined;
    }
    let off = 0;
    const end = buf.length;
    while (end - off >= 4) {
      const length = buf.readUInt32BE(off);
      if (length < HEADER_LENGTH || length > this.maxLength) {
        this.pending = undefined;
        throw new PduError(CommandStatus.ESME_RINVCMDLEN, `command_length ${length} is outside ${HEADER_LENGTH}..${this.maxLength}`, {
          sequenceNumber: end - off >= HEADER_LENGTH ? buf.readUInt32BE(off + 12) : 0,
        });
      }
      if (end - off < length) break;
      const frame = buf.subarray(off, off + length);
      off += length;
      onFrame(frame);
    }
    if (off < end) this.pending = buf.subarray(off);
  }

  reset(): void {
    this.pending = undefined;
  }
}
