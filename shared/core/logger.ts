/**
 * Structured JSON logs, one line per event, on stdout (CloudWatch and `npm start` alike).
 * Callers pass plain fields; never pass a secret (config secrets are `Secret` values, which
 * serialise as `<redacted>` even if passed by mistake). Text that quotes a secret without knowing it
 * (a platform's error reply echoing the webhook path, an error message naming the URL) is scrubbed
 * here, in every string of every line ({@link redactSecrets}).
 *
 * Per-invocation fields (Lambda's `awsRequestId`) travel in an ambient scope rather than a child
 * logger: the one logger is built at cold start and handed to every module, so only an ambient scope
 * reaches every line an invocation writes. {@link withLogFields} keeps concurrent scopes apart with an
 * `AsyncLocalStorage`; {@link withSequentialLogFields} serves a caller that runs one at a time (a
 * Lambda execution environment) without one, because on Node 20 and 22 a running `AsyncLocalStorage`
 * hooks every promise the process creates afterwards (~27 ms of CPU, 6 %, of a cold
 * start's init + first webhook on Node 20; Node 24's AsyncContextFrame does not hook).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { redactSecrets } from './secret.js';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

const scope = new AsyncLocalStorage<Record<string, unknown>>();
/** The fields of the one pending {@link withSequentialLogFields} call, if any. */
let sequential: Record<string, unknown> | undefined;
/** The fields in force here: an `AsyncLocalStorage` scope's, else the sequential caller's. */
const current = () => scope.getStore() ?? sequential;

/**
 * Runs `fn` with `fields` on every line any logger writes while it runs, including in callbacks
 * and promises it starts; scopes nest (inner fields win) and concurrent scopes stay apart.
 * @example export const handler = (event, context) => withLogFields({ awsRequestId: context.awsRequestId }, () => serve(event, context));
 * @returns what `fn` returns (its promise, for an async `fn`)
 */
export function withLogFields<T>(fields: Record<string, unknown>, fn: () => T): T {
  return scope.run({ ...current(), ...fields }, fn);
}

/**
 * {@link withLogFields} for a caller that runs one `fn` at a time and awaits it (a Lambda execution
 * environment runs one invocation at a time, and nothing of it runs after its answer): the fields are
 * held in a variable while `fn`'s promise is pending, with no `AsyncLocalStorage` (see the file's
 * header for why). A call made while another is still pending (a runtime that overlaps invocations)
 * gets an `AsyncLocalStorage` scope of its own fields, so the two stay apart; work either leaves
 * behind after its promise settles is not covered.
 * @returns what `fn`'s promise resolves to; rejects as it does
 */
export async function withSequentialLogFields<T>(fields: Record<string, unknown>, fn: () => Promise<T>): Promise<T> {
  if (sequential) return scope.run({ ...fields }, fn);
  sequential = fields;
  try {
    return await fn();
  } finally {
    sequential = undefined;
  }
}

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
 * @param write where each line goes (default: stdout), with its level
 */
export function createLogger(
  level: LogLevel = 'info',
  write: (line: string, level: LogLevel) => void = (line) => process.stdout.write(`${line}\n`),
  base: Record<string, unknown> = {},
): Logger {
  const log =
    (lvl: LogLevel) =>
    (event: string, fields: Record<string, unknown> = {}) => {
      if (ORDER[lvl] < ORDER[level]) return;
      write(
        JSON.stringify(
          { time: new Date().toISOString(), level: lvl, event, ...current(), ...base, ...fields },
          replacer,
        ),
        lvl,
      );
    };
  return {
    debug: log('debug'),
    info: log('info'),
    warn: log('warn'),
    error: log('error'),
    child: (fields) => createLogger(level, write, { ...base, ...fields }),
  };
}

/** How long {@link batchedWriter} keeps lines before writing them, ms. */
const BATCH_MS = 50;
/** How much {@link batchedWriter} keeps before writing at once, characters. */
const BATCH_CHARS = 64 * 1024;

/**
 * A writer for {@link createLogger} that hands stdout its lines in batches (`npm start`): at most
 * {@link BATCH_MS} later, or at once past {@link BATCH_CHARS}. stdout to a pipe or file is a
 * synchronous write on Linux, one system call per line, and each call to a pipe wakes its reader: a
 * duplicate post writes a dozen lines, and those calls were ~1–2 ms of its time. The
 * process's `exit` writes what is still waiting (an uncaught error too). A `warn` or `error` line is
 * written at once, with what waits before it: the line that explains a crash (an OOM kill, a SIGKILL)
 * is never the one left in the buffer. Not for Lambda: there the invocation may freeze before the
 * timer fires; it keeps one write per line.
 * @param out where the batches go (default: stdout)
 */
export function batchedWriter(
  out: (text: string) => void = (text) => process.stdout.write(text),
): (line: string, level?: LogLevel) => void {
  let pending: string[] = [];
  let chars = 0;
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    if (!pending.length) return;
    const text = `${pending.join('\n')}\n`;
    pending = [];
    chars = 0;
    out(text);
  };
  process.once('exit', flush);
  return (line, level) => {
    pending.push(line);
    chars += line.length + 1;
    if (chars >= BATCH_CHARS || level === 'warn' || level === 'error') flush();
    // Unref'd: waiting lines never keep the process alive; `exit` writes them.
    else timer ??= setTimeout(flush, BATCH_MS).unref();
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
