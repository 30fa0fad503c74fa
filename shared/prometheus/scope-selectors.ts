/**
 * Narrowing every vector selector of a PromQL expression with more matchers, e.g. an alert's
 * `model_name="qwen3-8b"`: `sum by (model_name) (rate(vllm:x[5m]))` →
 * `sum by (model_name) (rate(vllm:x{model_name="qwen3-8b"}[5m]))`. The expression is the alert's
 * (`generatorURL`'s `g0.expr`, which whoever posts to Alertmanager sets), so what the reader does not
 * understand is refused rather than guessed at, and no selector is left reading the whole fleet unless
 * it names one metric exactly.
 *
 * A scanner in one pass (strings, comments, ranges and label lists skipped whole; each closing
 * character looked for once), not a parser: it only has to find where selectors are. Our own code,
 * not a PromQL parser library, because none is kept for Node outside the Prometheus UI's editor
 * grammar (a CodeMirror/Lezer dependency for one rewrite), and this one runs in linear time on the
 * 16 KiB field (test/integration/alert-text/linear-time.test.ts).
 * @see https://prometheus.io/docs/prometheus/latest/querying/basics/
 */

import { AGGREGATIONS, LABEL_LISTS } from './metric-names.js';

/** Keywords and names that are never a metric when not followed by `(` (`x and y`, `… offset 5m`, `@ start()`). */
const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'atan2', 'inf', 'nan']);

/**
 * Matchers to add to one selector.
 * @param metric the selector's metric name, `undefined` for a selector of matchers only (`{__name__=~"…"}`)
 * @returns PromQL matchers (`model_name="qwen3-8b"`), already quoted; empty when none apply
 */
type MatchersFor = (metric: string | undefined) => readonly string[];

/**
 * `expr` with `matchersFor(metric)` added to each vector selector.
 * @returns `undefined` when `expr` holds what this reader does not follow (an unclosed bracket or
 *   string) or a selector that would read without any added matcher and does not name its metric
 *   exactly (`{__name__=~".+"}`, `{job="x"}`)
 * @example scopeSelectors('rate(x_total[5m]) > 1', () => ['job="a"']) // 'rate(x_total{job="a"}[5m]) > 1'
 */
export function scopeSelectors(expr: string, matchersFor: MatchersFor): string | undefined {
  let out = '';
  let i = 0;
  let afterLabelKeyword = false;
  while (i < expr.length) {
    const c = expr[i]!;
    let end: number | undefined;
    if (c === '"' || c === "'" || c === '`') end = stringEnd(expr, i);
    else if (c === '#') end = lineEnd(expr, i);
    else if (c === '[') end = closing(expr, i, ']');
    else if (c === '(' && afterLabelKeyword) end = closing(expr, i, ')');
    else if (c === '{') {
      const scoped = scopeBraces(expr, i, undefined, matchersFor);
      if (!scoped) return undefined;
      out += scoped.text;
      i = scoped.end;
      continue;
    } else if (isDigit(c) || (c === '.' && isDigit(expr[i + 1]))) end = numberEnd(expr, i);
    else if (isNameStart(c)) {
      const word = readWord(expr, i, matchersFor);
      if (!word) return undefined;
      out += word.text;
      afterLabelKeyword = LABEL_LISTS.has(word.name);
      i = word.end;
      continue;
    } else end = i + 1;
    if (end === undefined) return undefined;
    if (!isSpace(c)) afterLabelKeyword = false;
    out += expr.slice(i, end);
    i = end;
  }
  return out;
}

/** An identifier at `start`: a keyword or function copied, a metric name scoped. */
function readWord(
  expr: string,
  start: number,
  matchersFor: MatchersFor,
): { text: string; end: number; name: string } | undefined {
  let i = start;
  while (isNameChar(expr[i])) i++;
  const name = expr.slice(start, i);
  const after = skipSpaces(expr, i);
  const lower = name.toLowerCase();
  const notMetric =
    expr[after] === '(' ||
    KEYWORDS.has(lower) ||
    LABEL_LISTS.has(lower) ||
    (AGGREGATIONS.has(lower) && /^(?:by|without)[^a-zA-Z0-9_:]/i.test(expr.slice(after, after + 8)));
  if (notMetric) return { text: name, end: i, name: lower };
  if (expr[after] === '{') {
    const scoped = scopeBraces(expr, after, name, matchersFor);
    return scoped && { text: name + expr.slice(i, after) + scoped.text, end: scoped.end, name: '' };
  }
  const matchers = matchersFor(name);
  return { text: matchers.length ? `${name}{${matchers.join(',')}}` : name, end: i, name: '' };
}

/** The matchers block opening at `open`, with the added matchers before its `}`. */
function scopeBraces(
  expr: string,
  open: number,
  metric: string | undefined,
  matchersFor: MatchersFor,
): { text: string; end: number } | undefined {
  const close = closing(expr, open, '}');
  if (close === undefined) return undefined;
  const inside = expr.slice(open + 1, close - 1);
  const matchers = matchersFor(metric);
  // A metric read only by `__name__` (or not at all) is no exact name: never read unscoped.
  if (matchers.length === 0 && (metric === undefined || inside.includes('__name__'))) return undefined;
  if (matchers.length === 0) return { text: expr.slice(open, close), end: close };
  const trimmed = inside.trimEnd();
  const separator = trimmed === '' || trimmed.endsWith(',') ? '' : ',';
  return { text: `{${trimmed}${separator}${matchers.join(',')}}`, end: close };
}

/**
 * The index after the `close` that ends the bracket opening at `open` (strings inside skipped, the
 * same bracket nested for parentheses), or `undefined` when it never closes.
 */
function closing(expr: string, open: number, close: string): number | undefined {
  const opener = expr[open]!;
  let depth = 0;
  for (let i = open; i < expr.length; i++) {
    const c = expr[i]!;
    if (c === '"' || c === "'" || c === '`') {
      const end = stringEnd(expr, i);
      if (end === undefined) return undefined;
      i = end - 1;
    } else if (c === opener) depth++;
    else if (c === close && --depth === 0) return i + 1;
  }
  return undefined;
}

/** The index after the string opening at `start` (backslash escapes except in backquotes), or `undefined`. */
function stringEnd(expr: string, start: number): number | undefined {
  const quote = expr[start]!;
  for (let i = start + 1; i < expr.length; i++) {
    if (expr[i] === '\\' && quote !== '`') i++;
    else if (expr[i] === quote) return i + 1;
  }
  return undefined;
}

function lineEnd(expr: string, start: number): number {
  const newline = expr.indexOf('\n', start);
  return newline < 0 ? expr.length : newline + 1;
}

/** A number or duration (`0.95`, `1e-3`, `0x1f`, `5m`, `1h30m`). */
function numberEnd(expr: string, start: number): number {
  let i = start;
  while (i < expr.length) {
    const c = expr[i]!;
    const exponentSign = (c === '+' || c === '-') && (expr[i - 1] === 'e' || expr[i - 1] === 'E');
    if (!isNameChar(c) && c !== '.' && !exponentSign) break;
    i++;
  }
  return i;
}

const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';
const isNameStart = (c: string) => (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c === '_' || c === ':';
const isNameChar = (c: string | undefined) => c !== undefined && (isNameStart(c) || isDigit(c));
const isSpace = (c: string | undefined): boolean => c !== undefined && c !== '' && c.trim() === '';

function skipSpaces(text: string, i: number): number {
  let j = i;
  while (isSpace(text[j])) j++;
  return j;
}
