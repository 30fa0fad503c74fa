/**
 * Structured JSON logs, one line per event, on stdout (CloudWatch and `npm start` alike).
 * Callers pass plain fields; never pass a secret (config secrets are `Secret` values, which
 * serialise as `<redacted>` even if passed by mistake). Text that quotes a secret without knowing it
 * (a platform's error reply echoing the webhook path, an error message naming the URL) is scrubbed
 * here, in every string of every line ({@link redactSecrets}).
 */
import { redactSecrets } from './secret.js';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(event: string, fields?: Record<string, unknown>): void;
  info(event: string, fields?: Record<string, unknown>): void;
  warn(event: string, fields?: Record<string, unknown>): void;
  error(event: string, fields?: Record<string, unknown>): void;
  /** A logger whose lines all carry `fields` (e.g. the `groupKey`). */
  child(fields: Record<string, unknown>): Logger;
}

/**
 * Creates a JSON-lines logger.
 * @param level the lowest level written
 * @param write where each line goes (default: stdout)
 */
export function createLogger(
  level: LogLevel = 'info',
  write: (line: string) => void = (line) => process.stdout.write(line + '\n'),
  base: Record<string, unknown> = {},
): Logger {
  const log = (lvl: LogLevel) => (event: string, fields: Record<string, unknown> = {}) => {
    if (ORDER[lvl] < ORDER[level]) return;
    write(JSON.stringify({ time: new Date().toISOString(), level: lvl, event, ...base, ...fields }, replacer));
  };
  return {
    debug: log('debug'),
    info: log('info'),
    warn: log('warn'),
    error: log('error'),
    child: (fields) => createLogger(level, write, { ...base, ...fields }),
  };
}

/** A logger that drops everything (tests that do not look at logs). */
export const silentLogger: Logger = createLogger('error', () => {});

/** Errors as name and message; every string, error messages included, scrubbed of secrets. */
function replacer(_key: string, value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message };
  if (typeof value === 'string') return redactSecrets(value);
  return value;
}
