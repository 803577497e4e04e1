import { describe, expect, it } from 'vitest';
import { CommandId } from './command-id';
import { FrameDecoder } from './frame-decoder';
import { decodePdu, writePdu, PduError, type Pdu } from './pdu';
import { PduWriter } from './pdu-writer';

function stream(count: number): Buffer {
  const w = new PduWriter();
  for (let i = 1; i <= count; i++) {
    const pdu: Pdu =
      i % 2
        ? { commandId: CommandId.enquire_link, commandStatus: 0, sequenceNumber: i }
        : { commandId: CommandId.submit_sm_resp, commandStatus: 0, sequenceNumber: i, messageId: `id-${i}` };
    writePdu(w, pdu);
  }
  return w.take();
}

function collect(decoder: FrameDecoder, chunks: Buffer[]): number[] {
  const seqs: number[] = [];
  for (const chunk of chunks) decoder.push(chunk, (frame) => seqs.push(decodePdu(frame).sequenceNumber));
  return seqs;
}

describe('SMPP frame decoder', () => {
  it('hands out every PDU when a chunk holds several', () => {
    expect(collect(new FrameDecoder(), [stream(50)])).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
  });

  it('reassembles PDUs fed one byte at a time', () => {
    const bytes = stream(5);
    const decoder = new FrameDecoder();
    expect(
      collect(
        decoder,
        [...bytes].map((b) => Buffer.of(b)),
      ),
    ).toEqual([1, 2, 3, 4, 5]);
    expect(decoder.buffered).toBe(0);
  });

  it('keeps a partial tail until the rest arrives, at any split point', () => {
    const bytes = stream(3);
    for (let cut = 1; cut < bytes.length; cut++) {
      expect(collect(new FrameDecoder(), [bytes.subarray(0, cut), bytes.subarray(cut)])).toEqual([1, 2, 3]);
    }
  });

  it('rejects an absurd command_length instead of waiting for gigabytes', () => {
    const decoder = new FrameDecoder(4096);
    const huge = Buffer.from('7fffffff00000004000000000000000a', 'hex');
    expect(() => decoder.push(huge, () => undefined)).toThrow(PduError);
    expect(() => new FrameDecoder().push(Buffer.from('0000000500000015', 'hex'), () => undefined)).toThrow(/outside/);
  });
});
