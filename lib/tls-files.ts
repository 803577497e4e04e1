import { createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';
import fs from 'node:fs';

/** Why a TLS file cannot be used, naming the variable that points at it. */
export class TlsFileError extends Error {}

const READ_ERRORS: Record<string, string> = { ENOENT: 'no such file', EACCES: 'permission denied', EISDIR: 'it is a directory' };

/** The file a variable names, or why it cannot be read (no such file, permission denied…). */
export function readTlsFile(variable: string, file: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? '';
    throw new TlsFileError(`${variable}: cannot read ${file}: ${READ_ERRORS[code] ?? (err as Error).message}`);
  }
}

/**
 * A PEM certificate (the first of a chain) and the private key that goes
 * with it, each read from the file a variable names. OpenSSL's own words for
 * a wrong file ("no start line", "key values mismatch") name neither the
 * variable nor the mistake: these do, swapped files included.
 */
export function checkCertificateAndKey(cert: { variable: string; file: string }, key: { variable: string; file: string }): void {
  const certPem = readTlsFile(cert.variable, cert.file);
  const keyPem = readTlsFile(key.variable, key.file);
  const swapped = `are ${cert.variable} and ${key.variable} swapped?`;
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(certPem);
  } catch {
    const hint = /-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(certPem.toString('latin1'))
      ? ` holds a private key, not a certificate: ${swapped}`
      : ' is not a PEM certificate';
    throw new TlsFileError(`${cert.variable}: ${cert.file}${hint}`);
  }
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(keyPem);
  } catch {
    const hint = /-----BEGIN CERTIFICATE-----/.test(keyPem.toString('latin1'))
      ? ` holds a certificate, not a private key: ${swapped}`
      : ' is not a PEM private key (unencrypted)';
    throw new TlsFileError(`${key.variable}: ${key.file}${hint}`);
  }
  if (!certificate.checkPrivateKey(privateKey)) {
    throw new TlsFileError(`${key.variable}: ${key.file} is not the private key of the certificate in ${cert.variable} (${cert.file})`);
  }
}
