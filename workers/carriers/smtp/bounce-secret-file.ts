import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

const NAME = 'bounce-secret';

/**
 * The secret return paths are signed with when HERMOD_BOUNCE_SECRET is not
 * set: the one kept in `<data dir>/bounce-secret` (owner-only), made there
 * the first time. A bounce comes days after its e-mail, through restarts, so
 * the secret outlives them; e-mail workers sharing a data directory share it.
 * Workers on machines of their own need HERMOD_BOUNCE_SECRET, the same on
 * each, or one's bounces are refused by another's listener.
 */
export function bounceSecretFile(dataDir: string): string {
  const file = path.join(dataDir, NAME);
  const read = (): string | undefined => {
    try {
      const secret = fs.readFileSync(file, 'utf8').trim();
      return secret === '' ? undefined : secret;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  };
  const kept = read();
  if (kept) return kept;
  fs.mkdirSync(dataDir, { recursive: true });
  // Written whole under another name, then linked into place: two workers starting at once keep the first one's.
  const draft = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  fs.writeFileSync(draft, `${randomBytes(32).toString('base64url')}\n`, { mode: 0o600 });
  try {
    fs.linkSync(draft, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    fs.rmSync(draft, { force: true });
  }
  const made = read();
  if (!made) throw new Error(`${file} is empty: remove it, or set HERMOD_BOUNCE_SECRET`);
  return made;
}
