/**
 * Rules for settings that used to be accepted silently and then misbehaved: numbers in forms nobody
 * means (`1e3`, `0x10`, `1.0`) or too large for a timer (`setTimeout` fires at once beyond 2^31 − 1 ms),
 * times without a zone (`Dec 1` read as 2001-12-01 local time), and Prometheus or Alertmanager URLs
 * copied from a browser (a UI page such as `/graph` or `/#/alerts`, which the API paths are then
 * appended to). Each rule's message names the accepted form; `config.ts` prefixes the setting's name.
 */
import * as z from '../core/zod.js';

/** Whole numbers as people write them: decimal digits only. */
const DIGITS = /^\d+$/;
/** Decimal numbers: digits, optionally a fraction. */
const DECIMAL = /^\d+(\.\d+)?$/;

const unset = (v: unknown) => v === '' || v === undefined;

/**
 * A whole number in `min`–`max` written in decimal digits; unset: `fallback`.
 * @param unit what the number counts (`milliseconds`, `seconds`), for the message
 */
export function wholeNumber(fallback: number, min: number, max: number, unit: string) {
  return wholeNumberOr(fallback, min, max, `must be a whole number of ${unit} ${min}–${max}`);
}

/** A TCP port, 0–65535 in decimal digits; unset: `fallback`. */
export function portNumber(fallback: number) {
  return wholeNumberOr(fallback, 0, 65535, 'must be a port number 0–65535');
}

function wholeNumberOr(fallback: number, min: number, max: number, message: string) {
  return z.pipe(
    z.transform((v) => (unset(v) ? fallback : typeof v === 'string' && DIGITS.test(v) ? Number(v) : Number.NaN)),
    z.number({ message }).check(z.int({ message }), z.minimum(min, { message }), z.maximum(max, { message })),
  );
}

/** Like {@link wholeNumber}, unset meaning unset. */
export function optionalWholeNumber(min: number, max: number, unit: string) {
  const message = `must be a whole number of ${unit} ${min}–${max}`;
  return z.pipe(
    z.transform((v) => (unset(v) ? undefined : typeof v === 'string' && DIGITS.test(v) ? Number(v) : Number.NaN)),
    z.optional(
      z.number({ message }).check(z.int({ message }), z.minimum(min, { message }), z.maximum(max, { message })),
    ),
  );
}

/** A positive decimal number up to `max` (`0.5`, `6`); unset: `fallback`. */
export function positiveDecimal(fallback: number, max: number, unit: string) {
  const message = `must be a positive number of ${unit}, at most ${max}`;
  return z.pipe(
    z.transform((v) => (unset(v) ? fallback : typeof v === 'string' && DECIMAL.test(v) ? Number(v) : Number.NaN)),
    z.number({ message }).check(z.positive({ message }), z.maximum(max, { message })),
  );
}

/**
 * A comma-separated list (`a, b`), each item trimmed and checked; unset or only commas: unset.
 * @param problem why an item is not accepted (the message names its position, never its text), or `undefined`
 */
export function commaList(problem: (item: string) => string | undefined) {
  return z.pipe(
    z.transform((v, ctx) => {
      if (unset(v)) return undefined;
      const items = String(v)
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean);
      for (const [i, item] of items.entries()) {
        const why = problem(item);
        if (why) {
          ctx.issues.push({ code: 'custom', message: `item ${i + 1}: ${why}`, input: v });
          return z.NEVER;
        }
      }
      return items.length ? items : undefined;
    }),
    z.optional(z.array(z.string())),
  );
}

/** RFC 3339 date-time: date, `T`, time, optional fraction, and a zone (`Z` or `±hh:mm`). @see https://www.rfc-editor.org/rfc/rfc3339#section-5.6 */
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * A point in time as RFC 3339 with its zone (`2026-12-01T00:00:00Z`, `2026-12-01T08:00:00+08:00`) or
 * Unix seconds (`1796083200`), as epoch milliseconds. A date alone, a time without a zone, or a
 * loose form (`Dec 1`, which `Date.parse` reads as 2001-12-01 local time) is refused, and so is a
 * number of 12 digits or more (milliseconds).
 */
/**
 * Most digits of Unix seconds taken: 10 until the year 2286, 11 beyond; 12 or more can only be
 * milliseconds (what `Date.now()` gives), which read as seconds would be a year past 50,000.
 */
const MAX_SECONDS_DIGITS = 11;

export function pointInTime() {
  const message = 'must be an RFC 3339 time with its zone (e.g. 2026-12-01T00:00:00Z) or Unix seconds';
  return z.pipe(
    z.string(),
    z.transform((s, ctx) => {
      if (DIGITS.test(s) && s.length > MAX_SECONDS_DIGITS) {
        const message = `must be Unix seconds, not milliseconds (${s.length} digits; Date.now() gives milliseconds: divide by 1000), or an RFC 3339 time`;
        ctx.issues.push({ code: 'custom', message, input: s });
        return z.NEVER;
      }
      const ms = DIGITS.test(s) ? Number(s) * 1000 : RFC3339.test(s) ? Date.parse(s) : Number.NaN;
      if (Number.isFinite(ms)) return ms;
      ctx.issues.push({ code: 'custom', message, input: s });
      return z.NEVER;
    }),
  );
}

/**
 * Paths that are a UI page or the API itself, not the base URL the API paths are appended to:
 * Prometheus's UI (`/graph`, `/query` in Prometheus 3, `/alerts`, `/targets`, …) and `/api/v1`;
 * Alertmanager's `/api/v2` (its UI lives in the fragment, `/#/alerts`, refused as any fragment).
 * @see https://prometheus.io/docs/prometheus/latest/querying/api/
 * @see https://github.com/prometheus/alertmanager/blob/main/api/v2/openapi.yaml
 */
const UI_OR_API_PATH =
  /\/(graph|query|alerts|targets|rules|status|flags|config|service-discovery|tsdb-status|agent|classic|api(\/v[12])?)\/?$/i;

/**
 * Why `raw` is not a Prometheus or Alertmanager base URL, or `undefined` when it is one. A path
 * prefix (`https://ops.example.com/prometheus`) is fine; a query, a fragment or a UI/API path is not.
 * @param example the base URL to suggest (`http://prometheus:9090`)
 */
export function baseUrlProblem(raw: string, example: string): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return undefined; // httpUrl() reports it
  }
  if (url.hash || raw.includes('#'))
    return `must be the base URL, e.g. ${example}, without a fragment (#/…: a UI page copied from the browser)`;
  if (url.search || raw.includes('?')) return `must be the base URL, e.g. ${example}, without a query`;
  const page = UI_OR_API_PATH.exec(url.pathname);
  if (page)
    return `must be the base URL, e.g. ${example}, not the page or API path ${page[0]} (a path prefix such as /prometheus is fine)`;
  return undefined;
}
