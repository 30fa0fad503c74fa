/**
 * HTML written with Hono's `html` tagged template: every interpolated string is escaped unless it is
 * already HTML built the same way, so markup is opt-in, never a forgotten escape. Used by the
 * acknowledgement pages (`shared/ack/`) and the chart route's refusal page.
 * @see https://hono.dev/docs/helpers/html
 */
import { html } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';

/** HTML built by {@link h}: interpolated into another `h` template as it is. */
export type Html = HtmlEscapedString;

/**
 * Hono's `html`, synchronous: strings (and numbers) interpolated are escaped, {@link Html} is kept,
 * arrays are concatenated, `undefined`, `null` and booleans leave nothing.
 * @example h`<p>${'a < b'}</p>` // '<p>a &lt; b</p>'
 * @throws Error when a value is a promise (none is: the pages are built synchronously)
 */
export function h(strings: TemplateStringsArray, ...values: unknown[]): Html {
  const out = html(strings, ...values);
  if (out instanceof Promise) throw new Error('an HTML page was built from a promise');
  return out;
}

/** `parts` with `separator` (text, escaped) between them. */
export function joinHtml(parts: readonly Html[], separator: string): Html {
  return h`${parts.flatMap((p, i) => (i === 0 ? [p] : [h`${separator}`, p]))}`;
}
