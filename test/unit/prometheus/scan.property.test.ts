/**
 * The one-pass scanners of rule expressions say what the regular expressions they replaced said, on
 * any expression made of PromQL's pieces and the inputs that made those patterns backtrack (runs of
 * spaces after `up`, `{` never closed, identifiers with and without `_`). The old patterns are the
 * oracle here, on short inputs where their cost does not matter.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { classifyAlert } from '../../../shared/enrich/classify.js';
import { stripTrailingComparison } from '../../../shared/prometheus/promql.js';
import { comparesUpWithZero, identifierRuns, metricNames } from '../../../shared/prometheus/scan.js';

/** `up` compared with 0, as the chart's spec matched it. */
const OLD_UP_IS_ZERO = /(?<![\w:])up\s*(?:\{[^}]*\})?\s*==\s*(?:bool\s+)?0(?![\d.])/;

/** The chart spec's metric names, as it found them. */
function oldMetricNames(promql: string): Set<string> {
  const bare = promql.replace(
    /"(?:[^"\\]|\\.)*"|\{[^}]*\}|\[[^\]]*\]|\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g,
    ' ',
  );
  return new Set(bare.match(/[a-zA-Z_:][a-zA-Z0-9_:]*(?:_|:)[a-zA-Z0-9_:]*(?!\s*\(|[a-zA-Z0-9_:])/g) ?? []);
}

const NUMBER = String.raw`[-+]?(?:0[xX][0-9a-fA-F]+|(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|Inf|NaN)`;
const OLD_TRAILING = new RegExp(String.raw`\s*(?:==|!=|>=|<=|>|<)\s*(?:bool\s+)?${NUMBER}\s*$`, 'i');

/** Whether the classifier's old pattern saw metric `name` in `expr`. */
const oldReads = (expr: string, name: string) =>
  new RegExp(`(?<![A-Za-z0-9_:])${name}(?:_bucket|_sum|_count)?(?![A-Za-z0-9_:])`).test(expr);

const PIECES = [
  'up',
  '(up',
  'up{',
  '{',
  '}',
  '[5m]',
  '(',
  ')',
  ' ',
  '  ',
  '\t',
  '\n',
  '==',
  '!=',
  '>',
  '<=',
  ' bool ',
  '0',
  '0.5',
  '1e3',
  '-Inf',
  'NaN',
  '"',
  '\\"',
  'job="a"',
  'a_b',
  'x:y',
  'vllm:num_requests_waiting',
  'vllm:time_to_first_token_seconds_bucket',
  'DCGM_FI_DEV_FB_USED',
  'http_requests_total',
  '5xx',
  'by',
  'by (model_name)',
  'on()',
  'rate(',
  'sum',
  ' or ',
  ' and ',
  '#',
  'é',
  '_',
  ':',
  '9',
];
/** Brackets opened minus closed. */
const depth = (e: string) => [...e].reduce((d, c) => d + ('([{'.includes(c) ? 1 : ')]}'.includes(c) ? -1 : 0), 0);
const expression = fc.array(fc.constantFrom(...PIECES), { maxLength: 24 }).map((parts) => parts.join(''));
const RUNS = { numRuns: 2000 };

describe('the rule expression scanners against the patterns they replaced', () => {
  it('comparesUpWithZero', () => {
    fc.assert(
      fc.property(expression, (e) => {
        expect(comparesUpWithZero(e)).toBe(OLD_UP_IS_ZERO.test(e));
      }),
      RUNS,
    );
  });

  it('metricNames', () => {
    fc.assert(
      fc.property(expression, (e) => {
        expect([...metricNames(e)].sort()).toEqual([...oldMetricNames(e)].sort());
      }),
      RUNS,
    );
  });

  it('identifierRuns, as the classifier reads metric names', () => {
    const names = ['vllm:num_requests_waiting', 'vllm:time_to_first_token_seconds', 'DCGM_FI_DEV_FB_USED'];
    fc.assert(
      fc.property(expression, (e) => {
        const ids = new Set(identifierRuns(e));
        for (const name of names) {
          const reads = ['', '_bucket', '_sum', '_count'].some((s) => ids.has(`${name}${s}`));
          expect(reads).toBe(oldReads(e, name));
        }
      }),
      RUNS,
    );
  });

  it('stripTrailingComparison of an unbalanced expression', () => {
    fc.assert(
      fc.property(
        // Unbalanced (the only case the trailing pattern decided), without strings or comments.
        expression.filter((e) => !/[#"]/.test(e) && depth(e) !== 0),
        (e) => {
          expect(stripTrailingComparison(e)).toBe(e.trim().replace(OLD_TRAILING, ''));
        },
      ),
      RUNS,
    );
  });

  it('classify an up == 0 rule with any spacing as target_down', () => {
    fc.assert(
      fc.property(fc.constantFrom(' ', '\t', '\n', ''), fc.nat(40), (space, n) => {
        const expr = `up${space.repeat(n)}{job="vllm"}${space.repeat(n)}==${space.repeat(n)}0`;
        const generatorURL = `http://p/graph?g0.expr=${encodeURIComponent(expr)}`;
        expect(classifyAlert({ labels: { alertname: 'X' }, generatorURL })).toBe('target_down');
      }),
    );
  });
});
