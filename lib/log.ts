import { traceLogFields } from './tracing';

/** One JSON line per event on stdout; cheap enough to leave on in production. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };
export const LOG_LEVELS = Object.keys(RANK) as LogLevel[];

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

// Set from the configuration (HERMOD_LOG_LEVEL) once it is read.
let threshold: number = RANK.info;

export function setLogLevel(level: LogLevel): void {
  threshold = RANK[level];
}

export function createLogger(base: Record<string, unknown> = {}): Logger {
  const write = (level: LogLevel, msg: string, fields?: Record<string, unknown>): void => {
    if (RANK[level] < threshold) return;
    // While a span is active (tracing on), the line names its trace and span.
    const line = JSON.stringify({ time: new Date().toISOString(), level, msg, ...traceLogFields(), ...base, ...fields }, errorReplacer);
    (level === 'error' || level === 'warn' ? process.stderr : process.stdout).write(line + '\n');
  };
  return {
    debug: (m, f) => write('debug', m, f),
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
    child: (fields) => createLogger({ ...base, ...fields }),
  };
}

function errorReplacer(_key: string, value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message, code: (value as { code?: unknown }).code };
  return value;
}
