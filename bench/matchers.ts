/**
 * The cost of RE2 (re2js) for routing: parsing a route's matchers (compiling the anchored RE2
 * expression), and one match, against JavaScript's own RegExp for the same simple expressions.
 * Decides whether re2js is fine on the per-alert path.
 */
import { performance } from 'node:perf_hooks';
import { RE2JS } from 're2js';
import { matches, parseMatchers } from '../shared/alertmanager/matchers/index.js';
import { round, type Benchmark, type Row } from './harness.js';

const EXPRESSIONS = [
  '(?i)vllm.*',
  'qwen3\\-8b|llama-3\\.1-70b',
  'kv_cache|queue|error_rate|gpu_memory|latency',
  '[[:upper:]][a-z]+Memory.*',
];
const VALUES = ['VLLMQueueBacklog', 'qwen3-8b', 'gpu_memory', 'GPUMemoryLeak', 'x'.repeat(200)];

/** Microseconds per call, over `n` calls. */
function microsPerCall(n: number, fn: (i: number) => unknown): number {
  for (let i = 0; i < Math.min(n, 1000); i++) fn(i);
  const start = performance.now();
  for (let i = 0; i < n; i++) fn(i);
  return ((performance.now() - start) * 1000) / n;
}

export const matchers: Benchmark = {
  name: 'matchers',
  description: 'parse+compile one =~ matcher, and one match (µs per call), re2js vs JavaScript RegExp',
  run: async () => {
    const rows: Row[] = [];
    for (const expr of EXPRESSIONS) {
      const [m] = parseMatchers(`name=~"${expr.replace(/\\/g, '\\\\')}"`);
      const js = (() => {
        try {
          return new RegExp(`^(?:${expr.replace('(?i)', '')})$`, expr.startsWith('(?i)') ? 'iu' : 'u');
        } catch {
          return undefined;
        }
      })();
      rows.push({
        expression: expr,
        'parse+compile µs': round(microsPerCall(2000, () => parseMatchers(`name=~"${expr}"`))),
        're2js compile µs': round(microsPerCall(2000, () => RE2JS.compile(`^(?:${expr})$`))),
        're2js match µs': round(microsPerCall(50_000, (i) => matches(m!, { name: VALUES[i % VALUES.length]! }))),
        'RegExp match µs': js ? round(microsPerCall(50_000, (i) => js.test(VALUES[i % VALUES.length]!))) : 'n/a',
      });
    }
    return rows;
  },
};
