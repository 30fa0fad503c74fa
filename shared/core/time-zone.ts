/**
 * The time zone every time in messages, pages and charts is shown in: `TIME_ZONE` (an IANA name),
 * default `UTC`, and an instant's wall-clock time in it. Here, below every layer that shows a time
 * (`shared/render`, `shared/chart`), so each reads the one setting.
 */
import { lazy } from './lazy.js';

/**
 * The time zone every time in messages, pages and charts is shown in: `TIME_ZONE` (an IANA name),
 * default `UTC`. One setting per process, set once at start-up (`shared/runtime/deps.ts`) before any
 * message is rendered: it never varies between two renderings, so it is not threaded through every
 * renderer's parameters beside the locale, which does.
 */
let timeZone = 'UTC';

/**
 * Sets the time zone of every time shown (`formatTime` of `shared/render/format.ts`, {@link wallClock}, charts) for the process.
 * @throws RangeError when `zone` is not a time zone this runtime knows (the configuration checks it first)
 */
export function setTimeZone(zone: string): void {
  timeZoneProblem(zone, true);
  timeZone = zone;
  zoned.reset();
}

/** The process's time zone (`TIME_ZONE`, see {@link setTimeZone}), e.g. `Asia/Shanghai`; default `UTC`. */
export function timeZoneName(): string {
  return timeZone;
}

/** The one reason {@link timeZoneProblem} gives, for any zone it refuses. */
const PROBLEM =
  'must be an IANA time zone name such as Asia/Shanghai or UTC (Area/City: an abbreviation such as CST is ambiguous)';

/**
 * Why `zone` is not a usable time zone (`undefined` when it is): an IANA name such as `Asia/Shanghai`
 * or `UTC` that this runtime's ICU knows.
 * @param raise throw instead of returning the problem
 */
export function timeZoneProblem(zone: string, raise = false): string | undefined {
  // The default needs no check: the first Intl object of a process loads ICU data (~20–30 ms of a cold init).
  if (zone === 'UTC') return undefined;
  // An abbreviation or legacy alias (`CST`, `EST`, `PRC`) is one region's reading of letters others read
  // differently (ICU's CST is US Central; in China it means UTC+8): only Area/Location names are taken.
  if (!zone.includes('/')) {
    if (raise) throw new RangeError(`ambiguous time zone ${zone}`);
    return PROBLEM;
  }
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    if (/^[+-]/.test(zone)) throw new RangeError(zone);
    return undefined;
  } catch (err) {
    if (raise) throw err;
    return PROBLEM;
  }
}

const WALL_CLOCK: Intl.DateTimeFormatOptions = {
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hourCycle: 'h23',
};
const zoned = resettableLazy(() => new Intl.DateTimeFormat('en-CA', { ...WALL_CLOCK, timeZone }));

/**
 * An instant as `YYYY-MM-DD HH:MM:SS` in `zone` (default: the process's, {@link setTimeZone}).
 * @param ms epoch milliseconds
 */
export function wallClock(ms: number, zone = timeZone): string {
  if (zone === 'UTC') return new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
  const format = zone === timeZone ? zoned() : undefined;
  const parts = (format ?? zonedFormat(zone)).formatToParts(new Date(ms));
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? '';
  return `${part('year')}-${part('month')}-${part('day')} ${part('hour')}:${part('minute')}:${part('second')}`;
}

function zonedFormat(zone: string): Intl.DateTimeFormat {
  return new Intl.DateTimeFormat('en-CA', { ...WALL_CLOCK, timeZone: zone });
}

/** {@link lazy} that can be built again (the time zone changed). */
function resettableLazy<T>(build: () => T): (() => T) & { reset(): void } {
  let get = lazy(build);
  const reset = () => {
    get = lazy(build);
  };
  return Object.assign(() => get(), { reset });
}
