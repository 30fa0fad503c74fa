/**
 * Alertmanager's label matchers: `name="value"`, `name!="value"`, `name=~"regex"`, `name!~"regex"`,
 * one or several in a string (`{severity="critical", kind=~"kv_cache|queue"}`), as in a route's
 * `matchers:` list. Values may be quoted (`\"`, `\\`, `\n` escapes) or bare. Regular expressions are
 * anchored at both ends, as Alertmanager anchors them (`kv_cache` does not match `kv_cache_x`).
 * A missing label matches as the empty string (`team=""` matches alerts without `team`).
 * @see https://prometheus.io/docs/alerting/latest/configuration/#matcher
 */

export type MatchType = '=' | '!=' | '=~' | '!~';

/** One parsed matcher. */
export interface Matcher {
  name: string;
  type: MatchType;
  /** The unquoted value (a regular expression for `=~` and `!~`). */
  value: string;
  /** The anchored expression, for `=~` and `!~`. */
  regex?: RegExp;
}

/** Thrown for a matcher that does not parse; the message says what is wrong, quoting the matcher. */
export class MatcherSyntaxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MatcherSyntaxError';
  }
}

const MATCHER = /^\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(=~|!~|!=|=)\s*(.*?)\s*$/s;

/**
 * Parses one matcher.
 * @example parseMatcher('severity=~"warning|critical"') // { name: 'severity', type: '=~', value: 'warning|critical', regex: /^(?:warning|critical)$/u }
 * @throws MatcherSyntaxError for a bad label name, a missing or unknown operator, unbalanced quotes or an invalid regular expression
 */
export function parseMatcher(text: string): Matcher {
  const match = MATCHER.exec(text);
  if (!match) throw new MatcherSyntaxError(`${JSON.stringify(text)} is not a matcher (expected name="value" with =, !=, =~ or !~)`);
  const [, name, type, raw] = match as unknown as [string, string, MatchType, string];
  const value = unquote(raw, text);
  if (type === '=' || type === '!=') return { name, type, value };
  try {
    // `u`: match code points, as Go's RE2 matches runes.
    return { name, type, value, regex: new RegExp(`^(?:${value})$`, 'u') };
  } catch (err) {
    throw new MatcherSyntaxError(`${JSON.stringify(text)}: invalid regular expression: ${(err as Error).message}`);
  }
}

function unquote(raw: string, text: string): string {
  if (!raw.startsWith('"')) {
    if (raw.includes('"')) throw new MatcherSyntaxError(`${JSON.stringify(text)}: unbalanced or unescaped double quotes in the value`);
    return raw;
  }
  if (raw.length < 2 || !raw.endsWith('"') || /(^|[^\\])(\\\\)*\\"$/.test(raw.slice(1))) {
    throw new MatcherSyntaxError(`${JSON.stringify(text)}: the value opens a double quote it does not close`);
  }
  const inner = raw.slice(1, -1);
  let out = '';
  for (let i = 0; i < inner.length; i++) {
    const c = inner[i]!;
    if (c === '"') throw new MatcherSyntaxError(`${JSON.stringify(text)}: unescaped double quote inside the value`);
    if (c !== '\\') {
      out += c;
      continue;
    }
    const next = inner[++i];
    if (next === 'n') out += '\n';
    else if (next === '"' || next === '\\') out += next;
    else out += `\\${next ?? ''}`; // regex escapes such as \d pass through, as in Alertmanager
  }
  return out;
}

/**
 * Parses a list of matchers, with or without braces, separated by commas outside quotes.
 * @example parseMatchers('{severity="critical", kind="kv_cache"}') // two matchers
 * @throws MatcherSyntaxError for any bad matcher, or an empty list
 */
export function parseMatchers(text: string): Matcher[] {
  let body = text.trim();
  if (body.startsWith('{')) {
    if (!body.endsWith('}')) throw new MatcherSyntaxError(`${JSON.stringify(text)}: opens a brace it does not close`);
    body = body.slice(1, -1);
  }
  const parts = splitOutsideQuotes(body).filter((p) => p.trim() !== '');
  if (parts.length === 0) throw new MatcherSyntaxError(`${JSON.stringify(text)}: no matcher`);
  return parts.map(parseMatcher);
}

function splitOutsideQuotes(text: string): string[] {
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\\' && quoted) {
      current += c + (text[++i] ?? '');
      continue;
    }
    if (c === '"') quoted = !quoted;
    if (c === ',' && !quoted) {
      parts.push(current);
      current = '';
    } else {
      current += c;
    }
  }
  parts.push(current);
  return parts;
}

/** Whether `labels` satisfy one matcher (a missing label counts as `''`). */
export function matches(matcher: Matcher, labels: Record<string, string>): boolean {
  const value = labels[matcher.name] ?? '';
  switch (matcher.type) {
    case '=':
      return value === matcher.value;
    case '!=':
      return value !== matcher.value;
    case '=~':
      return matcher.regex!.test(value);
    case '!~':
      return !matcher.regex!.test(value);
  }
}

/** Whether `labels` satisfy every matcher (an empty list matches everything). */
export function matchesAll(matchers: Matcher[], labels: Record<string, string>): boolean {
  return matchers.every((m) => matches(m, labels));
}

/** The matcher in Alertmanager's syntax, value quoted: `severity="critical"`. */
export function formatMatcher(m: Matcher): string {
  return `${m.name}${m.type}"${m.value.replace(/[\\"]/g, (c) => `\\${c}`).replace(/\n/g, '\\n')}"`;
}
