/**
 * Matching a parsed matcher against labels, and printing it as Alertmanager does. Apart from the
 * parser (`index.ts`) so that code which only matches or prints (the router, alert status) does not
 * load the RE2 engine: `re2js` is reached only where matchers are parsed, i.e. where a routing file
 * is read (lazily, `shared/runtime/routing-reader.ts`).
 * @see https://prometheus.io/docs/alerting/latest/configuration/#label-matchers
 */
import type { RE2JS } from 're2js';
import type { MatchType } from './types.js';

/** One parsed matcher. */
export interface Matcher {
  name: string;
  type: MatchType;
  /** The unquoted value (a regular expression for `=~` and `!~`). */
  value: string;
  /** The anchored RE2 expression `^(?:value)$`, for `=~` and `!~`. */
  regex?: RE2JS;
}

/** Whether `labels` satisfy one matcher (a missing label counts as `''`). */
export function matches(matcher: Matcher, labels: Readonly<Record<string, string>>): boolean {
  const value = labels[matcher.name] ?? '';
  switch (matcher.type) {
    case '=':
      return value === matcher.value;
    case '!=':
      return value !== matcher.value;
    case '=~':
      return matcher.regex!.testExact(value);
    case '!~':
      return !matcher.regex!.testExact(value);
  }
}

/** Whether `labels` satisfy every matcher (an empty list matches everything). */
export function matchesAll(matchers: readonly Matcher[], labels: Readonly<Record<string, string>>): boolean {
  return matchers.every((m) => matches(m, labels));
}

/** Characters that make Alertmanager quote a label name (`matcher/parse`'s reserved set). */
const NEEDS_QUOTES = /[\p{White_Space}{}!=~,\\"'`]/u;

/** Alertmanager's value escaping (OpenMetrics): `\` `"` and newline only, which both grammars read back. */
function escapeValue(text: string): string {
  return text.replace(/[\\"\n]/g, (c) => (c === '\n' ? '\\n' : `\\${c}`));
}

/**
 * The matcher as Alertmanager prints it (`labels.Matcher.String`): `severity="critical"`, the name
 * bare unless it holds a reserved character (`"my label"="x"`, readable by Alertmanager 0.27+ only).
 */
export function formatMatcher(m: Pick<Matcher, 'name' | 'type' | 'value'>): string {
  const name = m.name === '' || NEEDS_QUOTES.test(m.name) ? `"${escapeValue(m.name)}"` : m.name;
  return `${name}${m.type}"${escapeValue(m.value)}"`;
}
