/**
 * The metric names a PromQL expression reads, and the labels its outermost aggregation keeps: what a
 * rule's alerts can be about. A one-pass scanner over the expression's tokens (strings, label
 * matchers, ranges and grouping lists skipped), linear in its length: not a parser, so an expression
 * Prometheus would refuse may still give names.
 * @see https://prometheus.io/docs/prometheus/latest/querying/basics/
 */

/** Words that are PromQL syntax, not metric names. */
const KEYWORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'and',
  'or',
  'unless',
  'offset',
  'atan2',
  'inf',
  'nan',
]);
/** PromQL's aggregation operators. */
export const AGGREGATIONS = new Set([
  'sum',
  'min',
  'max',
  'avg',
  'group',
  'stddev',
  'stdvar',
  'count',
  'count_values',
  'bottomk',
  'topk',
  'quantile',
  'limitk',
  'limit_ratio',
]);

/** Keywords followed by a parenthesised list of label names. */
export const LABEL_LISTS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right']);

const isNameStart = (c: string) => /[A-Za-z_:]/.test(c);
const isNameChar = (c: string) => /[A-Za-z0-9_:]/.test(c);

/** The index after the string literal starting at `i` (its quote char), escapes skipped. */
function afterString(expr: string, i: number): number {
  const quote = expr[i];
  let j = i + 1;
  while (j < expr.length && expr[j] !== quote) j += expr[j] === '\\' && quote !== '`' ? 2 : 1;
  return j + 1;
}

/** The index after the bracket opened at `i` (`{`, `[` or `(`), strings inside skipped. */
function afterBracket(expr: string, i: number): number {
  const open = expr[i]!;
  const close = open === '{' ? '}' : open === '[' ? ']' : ')';
  let depth = 0;
  for (let j = i; j < expr.length; j++) {
    const c = expr[j]!;
    if (c === '"' || c === "'" || c === '`') j = afterString(expr, j) - 1;
    else if (c === open) depth++;
    else if (c === close && --depth === 0) return j + 1;
  }
  return expr.length;
}

/** The next index at or after `i` that is not white space. */
function skipSpace(expr: string, i: number): number {
  let j = i;
  while (j < expr.length && /\s/.test(expr[j]!)) j++;
  return j;
}

/** A `__name__="…"` matcher inside a selector's braces. */
const NAME_MATCHER = /__name__\s*=\s*"((?:[^"\\]|\\.)*)"/;

/**
 * The metric names `expr` reads, in order of first appearance: identifiers that are neither
 * functions, aggregations nor keywords, and `{__name__="…"}` selectors.
 * @example metricNames('sum by (model_name) (rate(vllm:num_requests_waiting{job="x"}[5m])) > 50')
 *          // ['vllm:num_requests_waiting']
 */
export function metricNames(expr: string): string[] {
  const names = new Set<string>();
  let i = 0;
  while (i < expr.length) {
    const c = expr[i]!;
    if (c === '"' || c === "'" || c === '`') i = afterString(expr, i);
    else if (c === '{') {
      const end = afterBracket(expr, i);
      const named = NAME_MATCHER.exec(expr.slice(i, end))?.[1];
      if (named) names.add(named);
      i = end;
    } else if (c === '[') i = afterBracket(expr, i);
    else if (/[0-9.]/.test(c)) {
      while (i < expr.length && /[0-9A-Za-z.]/.test(expr[i]!)) i++;
    } else if (isNameStart(c)) {
      let j = i;
      while (j < expr.length && isNameChar(expr[j]!)) j++;
      const word = expr.slice(i, j);
      const next = skipSpace(expr, j);
      if (LABEL_LISTS.has(word.toLowerCase()) && expr[next] === '(') i = afterBracket(expr, next);
      else {
        const lower = word.toLowerCase();
        // An aggregation may put its grouping first (`sum by (x) (…)`): a name only when no call follows.
        if (!KEYWORDS.has(lower) && !AGGREGATIONS.has(lower) && expr[next] !== '(') names.add(word);
        i = j;
      }
    } else i++;
  }
  return [...names];
}

/** The word starting at `i` (after white space and opening parentheses) and the index after it. */
function wordAt(expr: string, from: number): { word: string; end: number; start: number } {
  let i = skipSpace(expr, from);
  while (expr[i] === '(') i = skipSpace(expr, i + 1);
  let j = i;
  while (j < expr.length && isNameChar(expr[j]!)) j++;
  return { word: expr.slice(i, j).toLowerCase(), start: i, end: j };
}

/** The labels of a grouping clause (`by (a, b)`) at `i` (its keyword's end); `le` consumed by a quantile. */
function groupingAt(expr: string, keyword: string, i: number): string[] | 'all' {
  if (keyword === 'without') return 'all';
  const open = skipSpace(expr, i);
  return expr
    .slice(open + 1, afterBracket(expr, open) - 1)
    .split(',')
    .map((l) => l.trim())
    .filter((l) => l && l !== 'le');
}

/**
 * The labels the aggregation that begins `expr` keeps (`max by (job, instance) (…)`: `job`,
 * `instance`; `sum(…) by (model_name)`; `histogram_quantile(0.95, sum by (le, model_name) (…))`:
 * `model_name`, the bucket bound `le` being consumed), or `all` when it begins with no aggregation
 * (e.g. `deriv(x[30m]) * 3600 > 500`, `up == 0 or …`: the series' own labels) or one `without` some.
 */
export function keptLabels(expr: string): string[] | 'all' {
  let { word, start, end } = wordAt(expr, 0);
  if (word === 'histogram_quantile') {
    // Its second argument: after the first top-level comma of its call.
    const open = skipSpace(expr, end);
    let depth = 0;
    let comma = -1;
    for (let j = open; j < expr.length && comma < 0; j++) {
      const c = expr[j]!;
      if (c === '"' || c === "'" || c === '`') j = afterString(expr, j) - 1;
      else if (c === '{' || c === '[') j = afterBracket(expr, j) - 1;
      else if (c === '(') depth++;
      else if (c === ')') depth--;
      else if (c === ',' && depth === 1) comma = j;
    }
    if (comma < 0) return 'all';
    ({ word, start, end } = wordAt(expr, comma + 1));
  }
  if (!AGGREGATIONS.has(word) || start === end) return 'all';
  const next = wordAt(expr, end);
  if (next.word === 'by' || next.word === 'without') return groupingAt(expr, next.word, next.end);
  // `sum(…) by (…)`: the clause after the argument list.
  const open = skipSpace(expr, end);
  if (expr[open] !== '(') return 'all';
  const after = wordAt(expr, afterBracket(expr, open));
  return after.word === 'by' || after.word === 'without' ? groupingAt(expr, after.word, after.end) : [];
}
