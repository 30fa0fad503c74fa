/**
 * Reading facts out of a rule expression (`generatorURL`'s `g0.expr`) in one pass each: which
 * identifiers it names, whether it compares `up` with 0, which metrics it reads.
 *
 * Written as scanners, not regular expressions, because the text is the alert's: whoever can post to
 * Alertmanager's API sets it, and the patterns these replace backtracked quadratically on it (two
 * `\s*` around an optional `{…}` after `up`, a `{` never closed, an identifier that may start
 * anywhere and must end the input): 16,000 spaces after `(up` cost ~0.4 s an alert. Each function
 * here looks at every character a bounded number of times (test/integration/alert-text/linear-time.test.ts).
 * @see https://prometheus.io/docs/prometheus/latest/querying/basics/
 */

/** Whether `c` may be part of a PromQL identifier (metric names with colons, label names, keywords). */
function isIdentifierChar(c: string | undefined): boolean {
  if (c === undefined || c.length !== 1) return false;
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c === '_' || c === ':';
}

/** Whether `c` is white space as PromQL's lexer and `\s` read it. */
const isSpace = (c: string | undefined): boolean => c !== undefined && c !== '' && c.trim() === '';

/** The index of the first character at or after `i` that is not white space. */
function skipSpaces(text: string, i: number): number {
  let j = i;
  while (isSpace(text[j])) j++;
  return j;
}

/**
 * Each maximal run of identifier characters `[A-Za-z0-9_:]` in `expr`, in order, strings included
 * (a matcher on `__name__` names a metric too).
 * @example identifierRuns('rate(x_total{job="a"}[5m])') // ['rate', 'x_total', 'job', 'a', '5m']
 */
export function identifierRuns(expr: string): string[] {
  const runs: string[] = [];
  for (let i = 0; i < expr.length; ) {
    if (!isIdentifierChar(expr[i])) {
      i++;
      continue;
    }
    const start = i;
    while (isIdentifierChar(expr[i])) i++;
    runs.push(expr.slice(start, i));
  }
  return runs;
}

/**
 * The index of the next `char` at or after a position, remembered so that positions given in
 * increasing order cost one pass over the text in all (a `{` never closed, looked for after each of
 * 16,000 `up{`, would otherwise be searched for to the end each time).
 */
function nextIndexFinder(text: string, char: string): (from: number) => number {
  let found = -2;
  return (from) => {
    if (found === -1 || found >= from) return found;
    found = text.indexOf(char, from);
    return found;
  };
}

/**
 * Whether `expr` compares `up` (any matchers) with 0: `up == 0`, `up{job="vllm"} == bool 0`, also
 * inside a larger expression (`up == 0 or …`). The rule is then about a target that stopped
 * answering scrapes.
 */
export function comparesUpWithZero(expr: string): boolean {
  const closingBrace = nextIndexFinder(expr, '}');
  // After `up{…}` the rest depends only on where the braces close, and many `up{` may share one `}`.
  let afterClose = { at: -1, zero: false };
  for (let at = expr.indexOf('up'); at >= 0; at = expr.indexOf('up', at + 1)) {
    if (isIdentifierChar(expr[at - 1])) continue;
    const i = skipSpaces(expr, at + 2);
    if (expr[i] !== '{') {
      if (equalsZeroAt(expr, i)) return true;
      continue;
    }
    const close = closingBrace(i);
    if (close < 0) continue;
    if (afterClose.at !== close) afterClose = { at: close, zero: equalsZeroAt(expr, skipSpaces(expr, close + 1)) };
    if (afterClose.zero) return true;
  }
  return false;
}

/** Whether `== 0` (or `== bool 0`) starts at `i`, the 0 not followed by a digit or a point. */
function equalsZeroAt(expr: string, start: number): boolean {
  if (!expr.startsWith('==', start)) return false;
  let i = skipSpaces(expr, start + 2);
  if (expr.startsWith('bool', i) && isSpace(expr[i + 4])) i = skipSpaces(expr, i + 4);
  const after = expr[i + 1];
  return expr[i] === '0' && !(after !== undefined && (after === '.' || (after >= '0' && after <= '9')));
}

/** Keywords whose parenthesised list names labels, not metrics (`by (model_name)`). */
const LABEL_LIST_KEYWORDS = ['by', 'without', 'on', 'ignoring', 'group_left', 'group_right'];

/**
 * Metric names in PromQL, as a heuristic, not a parser: identifiers with a colon or an underscore
 * (after their first character), outside strings, label matchers `{…}`, ranges `[…]` and label lists
 * (`by (model_name)`), and not followed by `(` (functions such as `histogram_quantile`).
 * @example metricNames('sum by (model_name) (rate(vllm:num_requests_waiting[5m]))') // Set {'vllm:num_requests_waiting'}
 */
export function metricNames(expr: string): Set<string> {
  const bare = withoutNonMetrics(expr);
  const names = new Set<string>();
  for (let i = 0; i < bare.length; ) {
    if (!isIdentifierChar(bare[i])) {
      i++;
      continue;
    }
    const start = i;
    while (isIdentifierChar(bare[i])) i++;
    if (bare[skipSpaces(bare, i)] === '(') continue; // a function or an aggregation
    const run = bare.slice(start, i);
    const first = run.search(/[A-Za-z_:]/);
    const name = first < 0 ? '' : run.slice(first);
    if (name.length > 1 && /[_:]/.test(name.slice(1))) names.add(name);
  }
  return names;
}

/**
 * `expr` with what names no metric blanked (one space each): double-quoted strings, `{…}`, `[…]` and
 * label lists after a keyword (`by (model_name)`); an opening character never closed is kept.
 */
function withoutNonMetrics(expr: string): string {
  const closing = { '{': nextIndexFinder(expr, '}'), '[': nextIndexFinder(expr, ']'), '(': nextIndexFinder(expr, ')') };
  const quoted = quotedEndFinder(expr);
  let bare = '';
  let copied = 0;
  const blank = (from: number, to: number) => {
    bare += `${expr.slice(copied, from)} `;
    copied = to;
  };
  for (let i = 0; i < expr.length; ) {
    const c = expr[i]!;
    const end =
      c === '"' ? quoted(i) : c === '{' || c === '[' ? after(closing[c](i + 1)) : labelListEnd(expr, i, closing['(']);
    if (end === undefined) i++;
    else {
      blank(i, end);
      i = end;
    }
  }
  return bare + expr.slice(copied);
}

/** The index after `close`, or `undefined` when there is none (-1). */
const after = (close: number) => (close < 0 ? undefined : close + 1);

/** The index after the label list opening at `i` (`by (…)`, at a word boundary), or `undefined` when none does. */
function labelListEnd(expr: string, i: number, closingParen: (from: number) => number): number | undefined {
  if (isWordChar(expr[i - 1])) return undefined;
  for (const keyword of LABEL_LIST_KEYWORDS) {
    if (!expr.startsWith(keyword, i)) continue;
    const open = skipSpaces(expr, i + keyword.length);
    if (expr[open] === '(') return after(closingParen(open + 1));
  }
  return undefined;
}

/** `\w`: a word character for `\b` (the colon is not one). */
const isWordChar = (c: string | undefined) => c !== ':' && isIdentifierChar(c);

/**
 * The index after the double-quoted string opening at a position, or `undefined` when it is never
 * closed. Once one is never closed, no later one is (its scan would run on the same characters), so
 * that answer is remembered: a text of 16,000 unclosed quotes costs one pass, not 16,000.
 */
function quotedEndFinder(text: string): (start: number) => number | undefined {
  let unclosedFrom = Number.POSITIVE_INFINITY;
  return (start) => {
    if (start >= unclosedFrom) return undefined;
    for (let i = start + 1; i < text.length; i++) {
      if (text[i] === '\\') i++;
      else if (text[i] === '"') return i + 1;
    }
    unclosedFrom = start;
    return undefined;
  };
}
