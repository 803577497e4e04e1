/**
 * `bytes` split at arbitrary offsets (each taken modulo its length + 1), as a
 * socket or a stream may deliver them: inside a row, inside a character.
 */
export function cutBytes(bytes: Buffer, offsets: readonly number[]): Buffer[] {
  const at = [...new Set(offsets.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const pieces: Buffer[] = [];
  let from = 0;
  for (const to of [...at, bytes.length]) {
    pieces.push(bytes.subarray(from, to));
    from = to;
  }
  return pieces;
}
