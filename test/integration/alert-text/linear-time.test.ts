/**
 * No alert text can stall the service: every regular expression in shared/ and every path alert text
 * takes runs in linear time on adversarial inputs of the largest accepted field (16 KiB, the per-field
 * cut; 4 KiB for the growth's base). Judged by growth in CPU time from n to 4n
 * (`test/helpers/linear-time.ts`): a quadratic pattern grows ~16-fold, a linear one ~4-fold, and a
 * loaded machine changes neither. A pattern or a path made quadratic again fails here, naming the
 * pattern (file and line) or the path and the input that showed it.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { messageWith, TEXT_PATHS } from '../../helpers/alert-text-paths.js';
import { alertExpression, MAX_GENERATOR_URL_CHARS } from '../../../shared/alertmanager/schema.js';
import { stripTrailingComparison, topLevelComparison } from '../../../shared/prometheus/promql.js';
import { comparesUpWithZero, identifierRuns, metricNames } from '../../../shared/prometheus/scan.js';
import {
  BASE_CHARS,
  type Growth,
  halves,
  patternPumps,
  pump,
  type Pump,
  regexesSeeing,
  regexSites,
  repeat,
  scanAll,
  superLinear,
} from '../../helpers/linear-time.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const { literals, dynamic } = regexSites(ROOT, 'shared');

/**
 * The places that build a regular expression at run time, and why each is linear (the ones on an
 * alert text path are also fuzzed below, as recorded while the paths run).
 */
const DYNAMIC_SITES: Record<string, string> = {
  'shared/prometheus/promql.ts': 'the number side of a comparison, anchored at both ends (recorded on the chart path)',
  'shared/core/secret.ts': 'an alternation of escaped secret forms (no quantifier), run on log lines',
  'shared/alertmanager/matchers/utf8.ts': '`^[0-9a-fA-F]{n}$` on one escape of a routing-file matcher',
  'shared/store/alert-record-table.ts': 'the names of our own update expressions, on our own expression text',
  'shared/store/dedupe-dynamodb.ts': 'the names of our own update expressions, on our own expression text',
};

const describeGrowth = (g: Growth) =>
  `${g.small.toFixed(1)} ms at n, ${g.large.toFixed(1)} ms at 4n (×${g.ratio.toFixed(1)})`;

/** The first pump on which `regex` grows super-linearly, described; `undefined` when none does. */
async function slowPump(regex: RegExp): Promise<string | undefined> {
  const scan = scanAll(regex);
  for (const p of patternPumps(regex.source)) {
    const growth = await superLinear(scan, p.make);
    if (growth) return `on ${p.name}: ${describeGrowth(growth)}`;
  }
  return undefined;
}

describe('the detector', () => {
  it('finds a quadratic pattern from its own parts (the rule expression pattern that stalled the service)', async () => {
    const quadratic = /(?<![\w:])up\s*(?:\{[^}]*\})?\s*==\s*(?:bool\s+)?0(?![\d.])/;
    expect(await slowPump(quadratic)).toMatch(/^on "up" \+ /);
  });

  it('passes linear patterns', async () => {
    expect(await slowPump(/(?<![\w:])up\b/)).toBeUndefined();
    expect(await slowPump(/[a-z]+/g)).toBeUndefined();
  });
});

describe('every regular expression literal in shared/', () => {
  const byFile = new Map<string, typeof literals>();
  for (const l of literals) byFile.set(l.file, [...(byFile.get(l.file) ?? []), l]);
  it('are found', () => {
    expect(byFile.size).toBeGreaterThan(40);
    expect(literals.some((l) => l.file === 'shared/prometheus/scope-selectors.ts')).toBe(true);
  });

  it.each([...byFile.keys()].sort())('%s', { timeout: 120_000 }, async (file) => {
    const slow: string[] = [];
    for (const { line, regex } of byFile.get(file)!) {
      const found = await slowPump(regex);
      if (found) slow.push(`${file}:${line} /${regex.source}/${regex.flags} ${found}`);
    }
    expect(slow).toEqual([]);
  });
});

describe('regular expressions built at run time', () => {
  it('are only those known', () => {
    const files = [...new Set(dynamic.map((site) => site.replace(/:\d+$/, '')))];
    expect(files.filter((f) => !(f in DYNAMIC_SITES))).toEqual([]);
  });
});

/** A text with the mark and the shapes that lead to the conditional branches (newlines, markup, PromQL, URLs). */
const MARK = 'Zq7mark';
const MARKED_TEXTS = [
  MARK,
  `${MARK} up{job="a"} == 0 or vllm:num_requests_waiting > 5 and DCGM_FI_DEV_FB_USED > 1`,
  `sum by (model_name) (rate(http_requests_total{status="5xx"}[5m])) / 2 > bool 0.9 # ${MARK}`,
  `<b>${MARK}</b> & "q" 'a' \`c\` \\ \n - a = b\nSource: http://x\n\nAlerts Resolved:\nLabels:\n`,
  `https://user:pw@${MARK}.example.com/a?b=c#d \u202e\u2066 \u0007 \ud800 é 😀 *_~\`> @here <!channel>`,
];

describe('regular expressions that see alert text at run time', () => {
  const literalKeys = new Set(literals.map((l) => `/${l.regex.source}/${l.regex.flags}`));
  let seen: Map<string, RegExp>;

  it('are recorded on every path (those built at run time included)', async () => {
    seen = await regexesSeeing(MARK, async () => {
      for (const text of MARKED_TEXTS) for (const path of TEXT_PATHS) await path.run(messageWith(text));
    });
    expect(seen.size).toBeGreaterThan(20);
  });

  it('run in linear time (those not literals in shared/)', { timeout: 120_000 }, async () => {
    const slow: string[] = [];
    for (const [key, regex] of seen) {
      if (literalKeys.has(key)) continue;
      const found = await slowPump(regex);
      if (found) slow.push(`${key} ${found}`);
    }
    expect(slow).toEqual([]);
  });
});

/**
 * For the one-pass scanners of rule expressions: two shapes in a row (`up{up{…` then spaces), which
 * is where a scanner that looks ahead from each position turns quadratic.
 */
const SHAPES = ['up{', 'up', 'up ', ' ', '{', '}', '"', '\\"', '(', 'by(', 'a_', '==', 'bool ', 'x > 1', '#', '\n'];
const SCANNERS: [string, (expr: string) => unknown][] = [
  ['identifierRuns', identifierRuns],
  ['comparesUpWithZero', comparesUpWithZero],
  ['metricNames', metricNames],
  ['topLevelComparison', topLevelComparison],
  ['stripTrailingComparison', stripTrailingComparison],
];

describe('the rule expression scanners', () => {
  it.each(SCANNERS)('%s', { timeout: 120_000 }, async (_, scan) => {
    const slow: string[] = [];
    for (const p of [...SHAPES.flatMap((a) => SHAPES.map((b) => halves(a, b))), ...BASE_CHARS.map((c) => repeat(c))]) {
      const growth = await superLinear(scan, p.make);
      if (growth) slow.push(`${p.name}: ${describeGrowth(growth)}`);
    }
    expect(slow).toEqual([]);
  });

  it('read no expression longer than the field cut', () => {
    const expr = `up == 0 or ${'x'.repeat(MAX_GENERATOR_URL_CHARS)}`;
    expect(alertExpression({ generatorURL: `http://p/graph?g0.expr=${encodeURIComponent(expr)}` })).toBeUndefined();
    expect(alertExpression({ generatorURL: 'http://p/graph?g0.expr=up%20%3D%3D%200' })).toBe('up == 0');
  });
});

/**
 * For the paths: structure characters and the shapes the scanners above met (loops over lines,
 * separators and quotes are where code outside patterns turns quadratic).
 */
const PATH_PUMPS: Pump[] = [
  ...[' ', '\n', 'a', '_', '{', '(', '"', '\\', '<', '&', '/', '0', 'é', '\u{1f600}', '\ud800'].map((c) => repeat(c)),
  pump('(up', ' '),
  repeat('up{'),
  repeat('a_'),
  repeat(' - a = b\n'),
  repeat('Alerts Firing:\n'),
  repeat('Source: x\n\nAlerts Resolved:\nLabels:\n'),
  // Chat control sequences, mentions and formatting marks; an expression no label can narrow.
  repeat('<!channel>'),
  repeat('<@U123><http://evil|click>'),
  repeat('*_~`'),
  repeat('@all '),
  repeat('{__name__=~".+"} or '),
];

describe('every path alert text takes', () => {
  it.each(TEXT_PATHS.map((p) => [p.name, p] as const))('%s', { timeout: 300_000 }, async (_, path) => {
    const slow: string[] = [];
    for (const p of PATH_PUMPS) {
      const growth = await superLinear(path.run, (n) => messageWith(p.make(n)));
      if (growth) slow.push(`${p.name}: ${describeGrowth(growth)}`);
    }
    expect(slow).toEqual([]);
  });
});
