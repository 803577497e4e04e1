import fs from 'node:fs';
import { ConfigError } from './config';

/** Why a file-system call failed, in words (`ENOTDIR` → not a directory). */
const REASONS: Record<string, string> = {
  ENOTDIR: 'not a directory',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EROFS: 'a read-only file system',
  EEXIST: 'a file is there',
  ENOSPC: 'no space left',
};

/**
 * Makes the data directory if it is not there, and checks hermod may write
 * in it, before any role starts: what cannot be used is a configuration
 * error naming HERMOD_DATA_DIR, not the first writer's stack trace.
 *
 * The directory holds message text, recipients and callback receivers'
 * passwords: a new one is its owner's alone (0700), and other users lose
 * their access to an existing one (its group keeps what it had, for backups).
 */
export function ensureDataDir(dir: string): void {
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const stat = fs.statSync(dir);
    if (!stat.isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
    fs.accessSync(dir, fs.constants.W_OK | fs.constants.X_OK);
    if ((stat.mode & 0o007) !== 0 && stat.uid === process.getuid?.()) fs.chmodSync(dir, stat.mode & 0o7770); // setuid, setgid and sticky kept: files go on taking the directory's group
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? '';
    throw new ConfigError(
      `HERMOD_DATA_DIR: cannot use ${dir}: ${REASONS[code] ?? (err as Error).message} (it must be a directory hermod can create and write)`,
    );
  }
}
