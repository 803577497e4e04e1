/**
 * The bus port: topics split into partitions, consumer groups that share a
 * topic's partitions, at-least-once delivery. A record is handed to a group
 * again until the handler that received it resolves; records with the same key
 * land in the same partition and are handled in order.
 */
export interface BusRecord {
  key: string;
  value: BusValue;
}

/**
 * A record's value: its bytes, or a payload that writes its bytes only when a
 * bus that stores or sends them asks (bus-payloads.ts). The bus inside one
 * process hands the very value to its subscribers and never asks, so the
 * encoding is skipped there; Redis, Kafka and the thread bridge call
 * {@link valueBytes}.
 */
export type BusValue = Buffer | PendingBytes;

export interface PendingBytes {
  bytes(): Buffer;
  /** The bytes as text, as a Buffer's toString gives them: a reader that treats the value as a Buffer reads the same JSON. */
  toString(encoding?: BufferEncoding): string;
}

export const valueBytes = (value: BusValue): Buffer => (Buffer.isBuffer(value) ? value : value.bytes());

export interface DeliveredRecord extends BusRecord {
  topic: string;
  partition: number;
  /** Position within the partition (stream id, Kafka offset, sequence). */
  offset: string;
  /** How many times this record was handed out before (0 on first delivery). */
  redeliveries: number;
}

/** Handles a batch from one partition, in order. Resolving acknowledges all of it. */
export type BatchHandler = (records: DeliveredRecord[]) => Promise<void>;

export interface SubscribeOptions {
  /** Consumer group: the partitions of the topic are shared among its members. */
  group: string;
  /** Name of this member within the group (defaults to a random one). */
  consumer?: string;
  /** Largest batch handed to one handler call. */
  maxBatch?: number;
  /**
   * Batches of one partition in this member's hands at once (default 1). With
   * more, a batch whose handler is slow (a carrier taking its time, a send
   * waiting to be tried again) does not hold the partition's next batches:
   * they are handed out beside it, and the partition's position moves only
   * past batches acknowledged in a row, so a crash hands out again everything
   * from the oldest one not acknowledged. Records of one key are then no
   * longer handled one batch after another: only for handlers that need no
   * order between batches (each record on its own, repeats recognised).
   */
  inFlight?: number;
}

export interface Subscription {
  /** Stop receiving; records handed out and not acknowledged are redelivered to others. */
  close(): Promise<void>;
}

export interface PublishOptions {
  /**
   * Resolve only once the records would outlive this process. A bus that
   * stores records (Redis, Kafka) is there when publish resolves; the
   * in-process bus is there once every group subscribed to the topic has
   * acknowledged them (its consumers make them durable, e.g. in history).
   * For what a peer must not be told is done before it is (an SMPP receipt).
   */
  untilDurable?: boolean;
}

/** Where a published record is: the bus' epoch when it was stored, its partition and its position there. */
export interface BusPosition {
  epoch: string;
  partition: number;
  /** The record's offset, as DeliveredRecord has it (a stream id on Redis). */
  offset: string;
}

/** How far a group has acknowledged a topic, as the bus stands now. */
export interface AcknowledgedPositions {
  /** The bus' epoch now: a record stored in another epoch went with the store it was in (a Redis back empty). */
  epoch: string;
  /** Whether the group acknowledged the record at `position` (never for a position of another epoch). */
  covers(position: BusPosition): boolean;
}

/**
 * Publishing that says where each record went, and how far a group has
 * acknowledged them: for a bus that can lose records it had taken (a Redis
 * without persistence that comes back empty), so a publisher can keep what
 * it published until a consumer has it, and publish it again if it was lost.
 */
export interface TrackedPublishing {
  /** As Bus.publish, resolving with each record's position, in the order of `records`. */
  publish(topic: string, records: readonly BusRecord[]): Promise<BusPosition[]>;
  /** What `group` has acknowledged of `topic` (nothing, for a group that does not exist yet). */
  acknowledged(topic: string, group: string): Promise<AcknowledgedPositions>;
}

export interface Bus {
  /**
   * True for a bus whose records reach only subscribers in this process (the
   * in-process bus): one job can never be in two worker processes' hands.
   */
  readonly local?: boolean;
  /** Only on a bus that can lose records it had taken (Redis): see TrackedPublishing. */
  readonly tracked?: TrackedPublishing;
  publish(topic: string, records: readonly BusRecord[], options?: PublishOptions): Promise<void>;
  subscribe(topic: string, handler: BatchHandler, options: SubscribeOptions): Promise<Subscription>;
  /**
   * Records of the topic that the group has not acknowledged yet: for a group that never joined, every
   * record the topic retains, which it would read on joining (0 for an unknown topic).
   */
  lag(topic: string, group: string): Promise<number>;
  close(): Promise<void>;
}

export const topicName = (name: string): string => `hermod.${name}.v1`;
