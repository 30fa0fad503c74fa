/**
 * Alertmanager's label matchers, read as Alertmanager 0.27+ reads a route's `matchers:` in its
 * default ("fallback") mode: the classic grammar first (`name="value"`, `name=~"regex"`, …; the only
 * one up to 0.26), and when it refuses a text, the UTF-8 grammar (`"service.name"="x"`,
 * `service.name=x`). Where both read a text differently, the classic reading wins, as in Alertmanager.
 *
 * Regular expressions are RE2 (Go's `regexp`), anchored as Alertmanager anchors them, `^(?:RE)$`:
 * `(?i)`, `\-`, `\Q…\E`, `[[:alpha:]]` work; look-arounds and back-references are refused, as
 * Alertmanager refuses them. The engine is `re2js`, a pure-JavaScript port of RE2/J (the native `re2`
 * package needs a build step). Its cost: 150 kB more in the minified Lambda bundle (1.36 → 1.52 MB);
 * compiling a route's expression takes 0.1–0.4 ms, once at start-up; one match 1–4 µs, some 50×
 * JavaScript's RegExp yet negligible next to a webhook's I/O (`npm run bench -- matchers`, node 20).
 * A missing label matches as the empty string (`team=""` matches alerts without `team`).
 * @see https://prometheus.io/docs/alerting/latest/configuration/#label-matchers
 * @see https://github.com/prometheus/alertmanager/blob/main/matcher/compat/parse.go (fallback mode)
 * @see https://github.com/google/re2/wiki/Syntax
 */
import { RE2JS } from 're2js';
import { parseClassicMatcher, parseClassicMatchers } from './classic.js';
import type { MatcherText, ParseResult } from './types.js';
import { formatMatcher, type Matcher } from './match.js';
import { parseUtf8Matchers } from './utf8.js';
import { PipelineError } from '../../core/errors.js';

export { formatMatcher, matches, matchesAll, type Matcher } from './match.js';

/** Thrown for a matcher that does not parse; the message says what is wrong, quoting the matcher. */
export class MatcherSyntaxError extends PipelineError<'matcher_syntax'> {
  constructor(message: string) {
    super(message, 'matcher_syntax');
    this.name = 'MatcherSyntaxError';
  }
}

/** Lone UTF-16 surrogates: text that is not valid UTF-8 once encoded, which Alertmanager refuses. */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * Parses a list of matchers, with or without braces, separated by commas outside quotes; empty
 * text and `{}` give no matcher (a route that matches everything), as in Alertmanager.
 * @example parseMatchers('{severity="critical", kind=~"kv_cache|queue"}') // two matchers
 * @example parseMatchers('{"service.name"=~"(?i)vllm-.*"}') // a UTF-8 name (Alertmanager 0.27+)
 * @throws MatcherSyntaxError when neither grammar reads the text, or a regular expression is not RE2
 */
export function parseMatchers(text: string): Matcher[] {
  checkEncoding(text);
  const classic = compileAll(parseClassicMatchers(text));
  if (classic.ok) return classic.matchers;
  const utf8 = compileAll(parseUtf8Matchers(text));
  if (utf8.ok) return utf8.matchers;
  throw new MatcherSyntaxError(explain(classic.error, utf8.error));
}

/**
 * Parses exactly one matcher (no braces), by the same rules as {@link parseMatchers}.
 * @example parseMatcher('alertname=~"(?i)vllm.*"') // { name: 'alertname', type: '=~', value: '(?i)vllm.*', regex: RE2JS }
 * @throws MatcherSyntaxError for anything but one valid matcher
 */
export function parseMatcher(text: string): Matcher {
  checkEncoding(text);
  if (text.startsWith('{') || text.endsWith('}'))
    throw new MatcherSyntaxError(`${JSON.stringify(text)}: one matcher expected, without braces`);
  const single = parseClassicMatcher(text);
  const classic = compileAll(
    typeof single === 'string' ? { ok: false, error: single } : { ok: true, matchers: [single] },
  );
  if (classic.ok) return classic.matchers[0]!;
  const utf8 = compileAll(parseUtf8Matchers(text));
  if (utf8.ok && utf8.matchers.length === 1) return utf8.matchers[0]!;
  throw new MatcherSyntaxError(explain(classic.error, utf8.ok ? `${utf8.matchers.length} matchers` : utf8.error));
}

function checkEncoding(text: string): void {
  if (LONE_SURROGATE.test(text))
    throw new MatcherSyntaxError(`${JSON.stringify(text)}: not valid UTF-8 (a lone surrogate)`);
}

/** The classic reason; the UTF-8 one too when the classic grammar did not even see a matcher (likely UTF-8 syntax). */
function explain(classic: string, utf8: string): string {
  return classic.includes('is not a matcher')
    ? `${classic}; as a UTF-8 matcher (Alertmanager 0.27+): ${utf8}`
    : classic;
}

type Compiled = { ok: true; matchers: Matcher[] } | { ok: false; error: string };

/** Compiles the regular expressions; a text whose expression is not RE2 does not parse (Alertmanager's `NewMatcher`). */
function compileAll(result: ParseResult): Compiled {
  if (!result.ok) return result;
  const matchers: Matcher[] = [];
  for (const m of result.matchers) {
    const compiled = compile(m);
    if (typeof compiled === 'string') return { ok: false, error: compiled };
    matchers.push(compiled);
  }
  return { ok: true, matchers };
}

function compile(m: MatcherText): Matcher | string {
  if (m.type === '=' || m.type === '!=') return { ...m };
  try {
    return { ...m, regex: RE2JS.compile(`^(?:${m.value})$`) };
  } catch (err) {
    return `${JSON.stringify(formatMatcher(m))}: invalid regular expression: ${(err as Error).message}`;
  }
}
