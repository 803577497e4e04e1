import fs from 'node:fs';

/**
 * Appends all of `buf` to the file open as `fd` (in append mode, `end` bytes
 * long), or, when the write or its sync fails, cuts the file back to `end`
 * before the error goes on: a torn line would join the next one appended and
 * lose that one too, on replay.
 */
export function appendWhole(fd: number, buf: Buffer, end: number, fsync: boolean): void {
  let written = 0;
  try {
    while (written < buf.length) written += fs.writeSync(fd, buf, written, buf.length - written);
    if (fsync) fs.fdatasyncSync(fd);
  } catch (err) {
    try {
      fs.ftruncateSync(fd, end);
    } catch {
      // the write's own error is the one to report
    }
    throw err;
  }
}
