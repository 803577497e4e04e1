import { createHash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { createSemaphore } from '../../lib/semaphore';

const N = 16384;
const R = 8;
const P = 1;
const KEY_LEN = 32;

/**
 * Password hashes computed at once: each takes a thread of libuv's pool (4 by default) for about a quarter of a
 * second, and that pool also does core's file writes and DNS lookups. Checks from every gateway at once (a burst of
 * guesses from many addresses) filled it; now they wait their turn in order, and the rest of core goes on.
 */
const hashes = createSemaphore(2);

/** Password hashes running and waiting, for tests and operators. */
export function passwordHashes(): { running: number; waiting: number } {
  return { running: hashes.running, waiting: hashes.waiting };
}

function scryptAsync(secret: string, salt: Buffer, n: number, r: number, p: number): Promise<Buffer> {
  return hashes.run(
    () =>
      new Promise<Buffer>((resolve, reject) =>
        scrypt(secret, salt, KEY_LEN, { N: n, r, p, maxmem: 64 * 1024 * 1024 }, (err, key) => (err ? reject(err) : resolve(key))),
      ),
  );
}

/**
 * scrypt keys its inner HMAC with the password, and HMAC pads a key with zero
 * bytes, so `secret` and `secret\0` derive the same key. Hashing the base64 of
 * the password's UTF-8 bytes (which never holds a zero byte) keeps every
 * distinct password distinct.
 */
const passwordInput = (password: string): string => Buffer.from(password, 'utf8').toString('base64');

/** `scrypt2$N$r$p$salt$hash`, salt and hash in base64, over the base64 of the password. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scryptAsync(passwordInput(password), salt, N, R, P);
  return `scrypt2$${N}$${R}$${P}$${salt.toString('base64')}$${key.toString('base64')}`;
}

/**
 * Constant-time check of the exact password. Hashes of the first form
 * (`scrypt$…`, over the raw password) still verify, but never for a password
 * ending in a zero byte, which that form cannot tell apart.
 */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || (parts[0] !== 'scrypt' && parts[0] !== 'scrypt2')) return false;
  const [form, n, r, p, salt, hash] = parts as [string, string, string, string, string, string];
  const input = form === 'scrypt2' ? passwordInput(password) : password;
  const expected = Buffer.from(hash, 'base64');
  const actual = await scryptAsync(input, Buffer.from(salt, 'base64'), Number(n), Number(r), Number(p));
  const same = actual.length === expected.length && timingSafeEqual(actual, expected);
  return same && (form === 'scrypt2' || !password.endsWith('\0'));
}

/**
 * A hash of a password nobody knows, made once. Refusing a name that has no
 * password (no such application, or one with an API key only) verifies
 * against it, so that refusal takes as long as a wrong password's, and the
 * time of a 401 does not tell which names exist.
 */
let dummy: Promise<string> | undefined;

/** Spends what verifyPassword would spend on a stored hash, to refuse a name that has no password. */
export async function refusePassword(password: string): Promise<void> {
  dummy ??= hashPassword(randomBytes(16).toString('base64'));
  await verifyPassword(password, await dummy);
}

/**
 * Names a stored password hash without revealing it: a gateway that saw the
 * password verified against this hash asks again with the tag, and is told
 * whether the stored password is still the same, without a hash computed.
 */
export function passwordTag(stored: string): string {
  return createHash('sha256').update('hermod password tag\0').update(stored).digest('base64url');
}

/** Whether `tag` names `stored` (constant time). */
export function samePasswordTag(tag: string, stored: string): boolean {
  const expected = Buffer.from(passwordTag(stored));
  const given = Buffer.from(tag);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** API keys are long random strings, so a fast hash is enough and allows lookup by hash. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}
