import { MESSAGE_STATE_BY_STATE, MessageState, type ReceiptState } from '../carriers/smpp/delivery-receipt';

/** What query_sm answers about one message. */
export interface MessageStateView {
  /** SMPP 3.4 section 5.2.28: ENROUTE until the final time, then the outcome's state. */
  messageState: number;
  /** Epoch ms of the final state; undefined while en route. */
  finalAt: number | undefined;
  errorCode: number;
  /** source_addr of its submit_sm. */
  source: string;
}

const CHUNK = 16_384;
/** Source index 0: the source is in the overflow map, past the interned ones. */
const MAX_INTERNED = 0xffff;

interface Chunk {
  /** The submit number each slot holds (0: none). */
  numbers: Uint32Array;
  /**
   * (final time - epoch) · 2^12 + error code · 2^4 + message_state: exact in a double up to 2^41 ms (69 years). Four
   * bits for the state: SMPP's message_state runs to 9, and REJECTED (8) in three would read back as 0 with error code + 1.
   */
  packed: Float64Array;
  sources: Uint16Array;
}

/**
 * What became of the last `capacity` accepted submits, by their submit number
 * (the simulator's id counter), for query_sm: a ring of typed arrays, so a
 * million messages cost 14 octets each and no object of their own. The state
 * is derived when asked: en route until the final time (when the receipt is
 * due), then final. Sources are interned (a campaign has few senders); past
 * 65,535 distinct ones the rest go in a map beside.
 */
export class MessageStates {
  private readonly chunks: (Chunk | undefined)[] = [];
  private readonly sourceIndex = new Map<string, number>();
  private readonly sourceNames: string[] = [''];
  private readonly overflow = new Map<number, string>();
  private readonly epoch = Date.now();

  constructor(readonly capacity: number) {}

  /** Remembers submit `n` (numbers only grow; the one `capacity` before it is forgotten). */
  remember(n: number, state: ReceiptState, errorCode: number, finalAt: number, source: string): void {
    if (this.capacity <= 0 || n <= 0 || n > 0xffffffff) return;
    const slot = n % this.capacity;
    const chunk = this.chunk(slot);
    const i = slot % CHUNK;
    if (chunk.numbers[i] !== 0 && chunk.sources[i] === 0) this.overflow.delete(chunk.numbers[i]!);
    chunk.numbers[i] = n;
    const at = Math.max(0, Math.min(2 ** 41 - 1, finalAt - this.epoch));
    chunk.packed[i] = at * 2 ** 12 + (Math.max(0, Math.min(255, errorCode)) << 4) + MESSAGE_STATE_BY_STATE[state];
    let s = this.sourceIndex.get(source);
    if (s === undefined && this.sourceNames.length <= MAX_INTERNED) {
      s = this.sourceNames.push(source) - 1;
      this.sourceIndex.set(source, s);
    }
    chunk.sources[i] = s ?? 0;
    if (s === undefined) this.overflow.set(n, source);
  }

  /** What submit `n` became, as of `now`; undefined when unknown or forgotten. */
  lookup(n: number, now = Date.now()): MessageStateView | undefined {
    if (this.capacity <= 0 || !Number.isSafeInteger(n) || n <= 0 || n > 0xffffffff) return undefined;
    const slot = n % this.capacity;
    const chunk = this.chunks[Math.floor(slot / CHUNK)];
    const i = slot % CHUNK;
    if (!chunk || chunk.numbers[i] !== n) return undefined;
    const packed = chunk.packed[i]!;
    const low = packed % 2 ** 12;
    const finalAt = this.epoch + (packed - low) / 2 ** 12;
    const s = chunk.sources[i]!;
    const source = s === 0 ? (this.overflow.get(n) ?? '') : this.sourceNames[s]!;
    if (now < finalAt) return { messageState: MessageState.ENROUTE, finalAt: undefined, errorCode: 0, source };
    return { messageState: low & 15, finalAt, errorCode: low >> 4, source };
  }

  private chunk(slot: number): Chunk {
    const k = Math.floor(slot / CHUNK);
    let chunk = this.chunks[k];
    if (!chunk) {
      const size = Math.min(CHUNK, this.capacity - k * CHUNK);
      chunk = { numbers: new Uint32Array(size), packed: new Float64Array(size), sources: new Uint16Array(size) };
      this.chunks[k] = chunk;
    }
    return chunk;
  }
}
