/**
 * Building and trimming PromQL text.
 * @see https://prometheus.io/docs/prometheus/latest/querying/basics/
 */

const STRING_ESCAPES: Readonly<Record<string, string>> = { '\\': '\\\\', '"': '\\"', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * Quotes a label value as a PromQL double-quoted string (Go escaping rules: backslash, double
 * quote, newline, carriage return and tab are escaped; other characters, UTF-8 included, pass as is).
 * @example quoteString('a"b') // '"a\\"b"'
 * @see https://prometheus.io/docs/prometheus/latest/querying/basics/#string-literals
 */
export function quoteString(value: string): string {
  return `"${value.replace(/[\\"\n\r\t]/g, (c) => STRING_ESCAPES[c] ?? c)}"`;
}

/**
 * Equality matchers for the named labels that `labels` holds, in the order of `names`.
 * @param labels e.g. an alert's labels
 * @param names which labels identify a series (label names are never escaped: they are identifiers)
 * @returns e.g. `['model_name="qwen3-8b"', 'job="vllm"']`; empty when none of `names` is present
 */
export function equalityMatchers(labels: Readonly<Record<string, string>>, names: readonly string[]): string[] {
  return names.filter((name) => labels[name] !== undefined).map((name) => `${name}=${quoteString(labels[name] ?? '')}`);
}

/**
 * A vector selector: `metric{m1,m2}`, or the bare metric name when there are no matchers.
 * @param metric a metric name, e.g. `vllm:num_requests_waiting`
 * @param matchers label matchers already written as PromQL (see {@link equalityMatchers})
 */
export function selector(metric: string, matchers: readonly string[]): string {
  return matchers.length === 0 ? metric : `${metric}{${matchers.join(',')}}`;
}

const NUMBER = String.raw`[-+]?(?:0[xX][0-9a-fA-F]+|(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|Inf|NaN)`;
const TRAILING_COMPARISON = new RegExp(String.raw`\s*(?:==|!=|>=|<=|>|<)\s*(?:bool\s+)?${NUMBER}\s*$`, 'i');

/**
 * Removes a rule expression's trailing threshold comparison, giving the value the rule compared.
 * Only a comparison against a number literal at the very end is removed; anything else is returned
 * unchanged (trimmed).
 * @example stripTrailingComparison('sum by (model_name) (vllm:num_requests_waiting) > 50')
 *          // 'sum by (model_name) (vllm:num_requests_waiting)'
 */
export function stripTrailingComparison(expr: string): string {
  return expr.trim().replace(TRAILING_COMPARISON, '');
}
