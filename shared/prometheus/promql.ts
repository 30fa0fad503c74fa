/**
 * Building and trimming PromQL text.
 * @see https://prometheus.io/docs/prometheus/latest/querying/basics/
 */

/**
 * Characters Prometheus's lexer refuses raw but reads escaped: U+FFFD ("invalid UTF-8 rune": it cannot
 * tell it from a bad byte) and a lone UTF-16 surrogate (not UTF-8 at all), sent as `\ufffd`, as Go would
 * have decoded it.
 */
const NOT_RAW = /\ufffd|\p{Cs}/gu;

/**
 * Quotes a label value as a PromQL double-quoted string (Go escaping rules: backslash, double
 * quote, newline, carriage return and tab are escaped, U+FFFD as `\ufffd`; other characters, UTF-8
 * included, pass as is). Native replacements, no callback per character: a 16 KiB value of quotes
 * is escaped in well under a millisecond.
 * @example quoteString('a"b') // '"a\\"b"'
 * @see https://prometheus.io/docs/prometheus/latest/querying/basics/#string-literals
 */
export function quoteString(value: string): string {
  const escaped = value
    .replaceAll('\\', '\\\\')
    .replaceAll('"', '\\"')
    .replaceAll('\n', '\\n')
    .replaceAll('\r', '\\r')
    .replaceAll('\t', '\\t')
    .replace(NOT_RAW, '\\ufffd');
  return `"${escaped}"`;
}

/** A classic label name; any other UTF-8 name is quoted (Prometheus 3). */
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
/** A classic metric name (colons allowed); any other is quoted inside the braces (Prometheus 3). */
const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;

/**
 * A label name as PromQL reads it: bare when classic (`model_name`), else a quoted string
 * (`"service.name"`), the syntax of Prometheus 3.0+. Prometheus 2 has no syntax for such names: it
 * refuses the query as `bad_data` (test/integration/prometheus-selectors.test.ts).
 * @see https://prometheus.io/docs/guides/utf8/#querying
 */
export function labelName(name: string): string {
  return LABEL_NAME.test(name) ? name : quoteString(name);
}

/**
 * Equality matchers for the named labels that `labels` holds, in the order of `names`.
 * @param labels e.g. an alert's labels
 * @param names which labels identify a series (a name that is not classic is quoted, see {@link labelName})
 * @returns e.g. `['model_name="qwen3-8b"', 'job="vllm"']`; empty when none of `names` is present
 */
export function equalityMatchers(labels: Readonly<Record<string, string>>, names: readonly string[]): string[] {
  return names
    .filter((name) => labels[name] !== undefined)
    .map((name) => `${labelName(name)}=${quoteString(labels[name] ?? '')}`);
}

/**
 * A vector selector: `metric{m1,m2}`, or the bare metric name when there are no matchers. A metric
 * name that is not classic goes inside the braces, quoted (`{"http.server.duration",job="x"}`,
 * Prometheus 3.0+).
 * @param metric a metric name, e.g. `vllm:num_requests_waiting`
 * @param matchers label matchers already written as PromQL (see {@link equalityMatchers})
 */
export function selector(metric: string, matchers: readonly string[]): string {
  if (!METRIC_NAME.test(metric)) return `{${[quoteString(metric), ...matchers].join(',')}}`;
  return matchers.length === 0 ? metric : `${metric}{${matchers.join(',')}}`;
}

const NUMBER = String.raw`[-+]?(?:0[xX][0-9a-fA-F]+|(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|Inf|NaN)`;
const THRESHOLD_SIDE = new RegExp(String.raw`^(?:bool\s+)?(${NUMBER})$`, 'i');

/** A comparison operator of PromQL. */
export type ComparisonOp = '==' | '!=' | '>=' | '<=' | '>' | '<';

/** A rule expression split at its one top-level comparison with a number, e.g. `x > 0.9`. */
export interface TopLevelComparison {
  /** The compared expression, trimmed (`x`). */
  lhs: string;
  op: ComparisonOp;
  /** The number literal as written (`0.9`, `0x1F`, `+Inf`). */
  literal: string;
}

/**
 * Splits `expr` when its top level is a single comparison of an expression against a number literal
 * (`bool` allowed). PromQL binds `and`/`unless` and then `or` weaker than comparisons, and comparisons
 * chain left to right, so `a > 0.9 and b > 5`, `up == 0 or w > 50` and `x > 0 > 1` are not such a
 * comparison: `undefined`, as for a number on the left or anything else on the right.
 * @see https://prometheus.io/docs/prometheus/latest/querying/operators/#binary-operator-precedence
 */
export function topLevelComparison(expr: string): TopLevelComparison | undefined {
  const scan = scanTopLevel(expr);
  if (!scan.balanced || scan.setOperator || scan.comparisons.length !== 1) return undefined;
  const [{ op, start, end }] = scan.comparisons as [{ op: ComparisonOp; start: number; end: number }];
  const lhs = expr.slice(0, start).trim();
  const literal = THRESHOLD_SIDE.exec(expr.slice(end).trim())?.[1];
  return lhs && literal ? { lhs, op, literal } : undefined;
}

/**
 * Removes a rule expression's threshold comparison, giving the value the rule compared: only when
 * the whole expression is one comparison against a number literal ({@link topLevelComparison});
 * anything else is returned unchanged (trimmed).
 * @example stripTrailingComparison('sum by (model_name) (vllm:num_requests_waiting) > 50')
 *          // 'sum by (model_name) (vllm:num_requests_waiting)'
 */
export function stripTrailingComparison(expr: string): string {
  // Unbalanced brackets are no PromQL: Prometheus refuses it either way; the text at the end is
  // trimmed as it always was, so the refusal names the same position (recorded answers rely on it).
  if (!scanTopLevel(expr).balanced) return withoutTrailingComparison(expr.trim());
  return topLevelComparison(expr)?.lhs ?? expr.trim();
}

/** Characters of a comparison operator: the last of them in a text ending in `op number` starts or ends it. */
const OPERATOR_CHARS = '=!<>';
const COMPARISON_SIDE = new RegExp(String.raw`^\s*(?:bool\s+)?${NUMBER}\s*$`, 'i');

/**
 * `text` without a trailing `op number` (and the space before it), e.g. `x > 0.9` → `x`; as is when it
 * has none. A number holds no operator character, so the operator is found from the last of them, in
 * one pass (the pattern this replaces, `\s*(?:==|…)…$`, restarted at every space of a long run).
 */
function withoutTrailingComparison(text: string): string {
  let last = text.length - 1;
  while (last >= 0 && !OPERATOR_CHARS.includes(text[last]!)) last--;
  if (last < 0 || !COMPARISON_SIDE.test(text.slice(last + 1))) return text;
  const pair = text.slice(last - 1, last + 1);
  const op = ['==', '!=', '>=', '<='].includes(pair)
    ? pair
    : text[last] === '<' || text[last] === '>'
      ? text[last]
      : '';
  return op ? text.slice(0, last + 1 - op.length).trimEnd() : text;
}

const COMPARISON_AT = /(?:==|!=|>=|<=|>|<)/y;
const WORD_AT = /[a-zA-Z_:][a-zA-Z0-9_:]*/y;
const NUMBER_AT = /(?:0[xX][0-9a-fA-F]+|(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)[a-zA-Z0-9]*/y;
const SET_OPERATORS = new Set(['and', 'or', 'unless']);

/** The text `sticky` matches at `i` (a sticky pattern: no copy of the rest, no search beyond `i`), or `undefined`. */
function tokenAt(sticky: RegExp, text: string, i: number): string | undefined {
  sticky.lastIndex = i;
  return sticky.exec(text)?.[0];
}

/**
 * The operators at nesting depth 0 of `expr`: outside parentheses, brackets, braces, strings and
 * comments. Written here, not with a full PromQL parser, because only this top level is needed;
 * Prometheus's own grammar (`@prometheus-io/lezer-promql`) would be the next step if more is.
 */
function scanTopLevel(expr: string): {
  comparisons: { op: ComparisonOp; start: number; end: number }[];
  setOperator: boolean;
  balanced: boolean;
} {
  const comparisons: { op: ComparisonOp; start: number; end: number }[] = [];
  let setOperator = false;
  let depth = 0;
  for (let i = 0; i < expr.length; ) {
    const ch = expr[i]!;
    if (ch === '"' || ch === "'" || ch === '`') {
      i = stringEnd(expr, i);
    } else if (ch === '#') {
      const nl = expr.indexOf('\n', i);
      i = nl < 0 ? expr.length : nl;
    } else if ('([{'.includes(ch)) {
      depth++;
      i++;
    } else if (')]}'.includes(ch)) {
      depth--;
      i++;
    } else {
      const comparison = depth === 0 ? tokenAt(COMPARISON_AT, expr, i) : undefined;
      const token = comparison || tokenAt(NUMBER_AT, expr, i) || tokenAt(WORD_AT, expr, i) || ch;
      if (comparison) comparisons.push({ op: comparison as ComparisonOp, start: i, end: i + token.length });
      if (depth === 0 && SET_OPERATORS.has(token.toLowerCase())) setOperator = true;
      i += token.length;
    }
  }
  return { comparisons, setOperator, balanced: depth === 0 };
}

/** The index after the string literal opening at `start` (backslash escapes, except in raw backtick strings). */
function stringEnd(expr: string, start: number): number {
  const quote = expr[start];
  for (let i = start + 1; i < expr.length; i++) {
    if (expr[i] === '\\' && quote !== '`') i++;
    else if (expr[i] === quote) return i + 1;
  }
  return expr.length;
}

/** RE2 metacharacters, escaped with a backslash to match literally. */
const REGEX_META = /[\\.+*?()|[\]{}^$]/g;

/**
 * Escapes a label value for use inside a PromQL regex matcher (RE2, fully anchored), before
 * {@link quoteString} escapes it again as a string literal.
 * @example escapeRegex('qwen3-8b.v2') // 'qwen3-8b\\.v2'
 * @see https://github.com/google/re2/wiki/Syntax
 */
export function escapeRegex(value: string): string {
  return value.replace(REGEX_META, '\\$&');
}

/**
 * Matchers selecting the series of several label sets at once, one per label of `names`: an
 * equality when all sets share one value, else an anchored alternation (`model_name=~"a|b"`).
 * Distinct values are sorted, so the same sets give the same text.
 * @param labelSets e.g. the labels of the alerts a query serves
 * @param names label names every set carries
 * @example groupMatchers([{ model_name: 'a' }, { model_name: 'b' }], ['model_name']) // ['model_name=~"a|b"']
 */
export function groupMatchers(
  labelSets: ReadonlyArray<Readonly<Record<string, string>>>,
  names: readonly string[],
): string[] {
  return names.map((name) => {
    const values = [...new Set(labelSets.map((labels) => labels[name] ?? ''))].sort();
    if (values.length === 1) return `${labelName(name)}=${quoteString(values[0]!)}`;
    return `${labelName(name)}=~${quoteString(values.map(escapeRegex).join('|'))}`;
  });
}

/**
 * An aggregation `op by (labels) (inner)`, or `op(inner)` when there is no label to keep.
 * @example aggregate('sum', ['model_name'], 'x') // 'sum by (model_name) (x)'
 * @see https://prometheus.io/docs/prometheus/latest/querying/operators/#aggregation-operators
 */
export function aggregate(op: string, by: readonly string[], inner: string): string {
  return by.length === 0 ? `${op}(${inner})` : `${op} by (${by.map(labelName).join(', ')}) (${inner})`;
}
