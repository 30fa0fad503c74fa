/**
 * Alertmanager's classic matcher grammar (`pkg/labels/parse.go`: the only one up to 0.26, and the one
 * 0.27+ tries first in its default "fallback" mode): a classic label name, an operator, and a value
 * that may be double-quoted, where only `\"`, `\\` and `\n` are escapes and any other backslash stays
 * literal (so `"qwen3\-8b"` reaches the regex engine as `qwen3\-8b`). The list form trims one `{` and
 * one `}` independently and splits on commas outside quotes; a trailing comma is allowed.
 *
 * Written here because no package implements Alertmanager's grammar; it follows the Go source rule
 * by rule, and `test/integration/routing-oracle.test.ts` compares it with the real `amtool`.
 * @see https://github.com/prometheus/alertmanager/blob/main/pkg/labels/parse.go
 */
import type { MatcherText, ParseResult } from './types.js';

/** Go's `\s` is ASCII: `[\t\n\f\r ]` (no `\v`, no Unicode spaces). */
const MATCHER = /^[\t\n\f\r ]*([a-zA-Z_:][a-zA-Z0-9_:]*)[\t\n\f\r ]*(=~|=|!=|!~)[\t\n\f\r ]*([^]*?)[\t\n\f\r ]*$/;

/** Go's `strings.TrimSpace`: Unicode White_Space. */
const TRIM = /^\p{White_Space}+|\p{White_Space}+$/gu;

/** Parses a list of matchers as `labels.ParseMatchers` does (empty input: no matcher). */
export function parseClassicMatchers(text: string): ParseResult {
  let body = text.startsWith('{') ? text.slice(1) : text;
  if (body.endsWith('}')) body = body.slice(0, -1);
  const tokens = splitOutsideQuotes(body);
  const last = tokens.pop()!.replace(TRIM, '');
  if (last !== '') tokens.push(last);
  const matchers: MatcherText[] = [];
  for (const token of tokens) {
    const parsed = parseClassicMatcher(token);
    if (typeof parsed === 'string') return { ok: false, error: parsed };
    matchers.push(parsed);
  }
  return { ok: true, matchers };
}

/** Commas split outside double quotes; a backslash escapes the next `"` (inside or outside quotes). */
function splitOutsideQuotes(text: string): string[] {
  const tokens: string[] = [];
  let current = '';
  let quoted = false;
  let escaped = false;
  for (const c of text) {
    if (c === ',' && !quoted) {
      tokens.push(current);
      current = '';
      continue;
    }
    if (c === '"') {
      if (!escaped) quoted = !quoted;
      escaped = false;
    } else if (c === '\\') {
      escaped = !escaped;
    } else if (c !== ',') {
      escaped = false;
    }
    current += c;
  }
  tokens.push(current);
  return tokens;
}

/** One matcher as `labels.ParseMatcher` reads it; a string is the reason it does not parse. */
export function parseClassicMatcher(text: string): MatcherText | string {
  const match = MATCHER.exec(text);
  if (!match) return `${JSON.stringify(text)} is not a matcher (expected name="value" with =, !=, =~ or !~)`;
  const [, name, type, raw] = match as unknown as [string, string, MatcherText['type'], string];
  const value = unescapeValue(raw);
  return value.ok ? { name, type, value: value.value } : `${JSON.stringify(text)}: ${value.error}`;
}

function unescapeValue(raw: string): { ok: true; value: string } | { ok: false; error: string } {
  const quoted = raw.startsWith('"');
  const body = quoted ? raw.slice(1) : raw;
  let value = '';
  let closed = false;
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c === '\\' && i < body.length - 1) {
      const next = body[++i]!;
      // Only \n, \" and \\ are escapes; any other backslash is literal (regex escapes pass through).
      value += next === 'n' ? '\n' : next === '"' || next === '\\' ? next : `\\${next}`;
    } else if (c === '"') {
      if (!quoted) return { ok: false, error: 'unbalanced or unescaped double quotes in the value' };
      if (i < body.length - 1) return { ok: false, error: 'unescaped double quote inside the value' };
      closed = true;
    } else {
      value += c;
    }
  }
  if (quoted && !closed) return { ok: false, error: 'the value opens a double quote it does not close' };
  return { ok: true, value };
}
