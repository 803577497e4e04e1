import { HermodError } from '../../../lib/errors';

/** The fields nodemailer sets on the errors it hands back (a subset of its NodemailerError). */
interface SmtpFailure {
  message?: string;
  code?: string;
  /** Set when the server answered: the SMTP reply code and line. */
  responseCode?: number;
  response?: string;
  /** Set with responseCode: a rejection the same message would get again (5xx except 503). */
  permanent?: boolean;
  /** The system error under nodemailer's own code, e.g. ECONNREFUSED under ESOCKET. */
  originalCode?: string;
}

/**
 * Codes that say something is wrong with our side of the relay (credentials,
 * TLS, configuration), not with this message: retrying is right, rejecting
 * every message until an operator fixes the relay would not be.
 */
const RELAY_PROBLEMS = new Set(['EAUTH', 'ENOAUTH', 'EOAUTH2', 'ETLS', 'EREQUIRETLS', 'ECONFIG']);

/** Codes nodemailer raises before talking to the server about something only this message has. */
const MESSAGE_PROBLEMS = new Set(['EENVELOPE', 'EMAXRECIPIENTS']);

/**
 * Any failure of a send as HermodError: a permanent SMTP reply (5xx) or an
 * envelope nodemailer refuses itself becomes `carrier_rejected`; transient
 * replies (4xx), connection failures, timeouts and relay misconfiguration
 * become `carrier_transient`.
 */
export function smtpError(err: unknown): HermodError {
  if (err instanceof HermodError) return err;
  const e = (typeof err === 'object' && err !== null ? err : { message: String(err) }) as SmtpFailure;
  const code = e.code ?? '';
  const reply = e.response?.trim();

  if (!RELAY_PROBLEMS.has(code)) {
    if (typeof e.responseCode === 'number') {
      const permanent = e.permanent ?? (e.responseCode >= 500 && e.responseCode < 600);
      if (permanent) return new HermodError('carrier_rejected', reply || e.message || `SMTP ${e.responseCode}`, { cause: err });
    } else if (MESSAGE_PROBLEMS.has(code)) {
      return new HermodError('carrier_rejected', e.message ?? code, { cause: err });
    }
  }
  const why = e.originalCode && e.originalCode !== code ? `${code}/${e.originalCode}` : code;
  const text = reply && !(e.message ?? '').includes(reply) ? `${e.message}: ${reply}` : (e.message ?? 'SMTP send failed');
  return new HermodError('carrier_transient', why ? `${text} (${why})` : text, { cause: err });
}
