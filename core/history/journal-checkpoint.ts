import fsp from 'node:fs/promises';
import path from 'node:path';

/**
 * How far the journal has been flushed to the engine: a segment number and a
 * byte offset in it. Written to a temporary file and renamed into place, so a
 * process that dies mid-write leaves the previous checkpoint whole.
 */
export interface Checkpoint {
  segment: number;
  offset: number;
}

export type CheckpointRead =
  | { kind: 'found'; checkpoint: Checkpoint }
  | { kind: 'none' }
  /** The file is there but is not a checkpoint (power lost before its bytes reached the disk). */
  | { kind: 'unreadable'; text: string };

export async function readCheckpoint(file: string): Promise<CheckpointRead> {
  let text: string;
  try {
    text = await fsp.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'none' };
    throw err;
  }
  try {
    const cp = JSON.parse(text) as Partial<Checkpoint>;
    if (isCount(cp.segment) && isCount(cp.offset)) return { kind: 'found', checkpoint: { segment: cp.segment, offset: cp.offset } };
  } catch {
    // falls through: not a checkpoint
  }
  return { kind: 'unreadable', text: text.slice(0, 200) };
}

/** `fsync`: make it survive power loss too (the journal's own fsync setting). */
export async function writeCheckpoint(file: string, cp: Checkpoint, fsync: boolean): Promise<void> {
  const tmp = `${file}.tmp`;
  const handle = await fsp.open(tmp, 'w');
  try {
    await handle.writeFile(JSON.stringify(cp));
    if (fsync) await handle.datasync();
  } finally {
    await handle.close();
  }
  await fsp.rename(tmp, file);
  if (fsync) await syncDirectory(path.dirname(file));
}

/** The rename itself is durable only once the directory is synced. */
async function syncDirectory(dir: string): Promise<void> {
  const handle = await fsp.open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

const isCount = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
