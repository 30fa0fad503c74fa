/**
 * The likely-cause rules, as data. A rule holds when every one of its conditions holds on the
 * signals (and trend) gathered for an alert of one of its kinds; the first rule that holds, in this
 * order, names the cause. A condition on a signal with no data or NaN never holds, so missing
 * evidence means silence, not a guess.
 *
 * To add a rule: append an entry (most specific first), name only signals the kind's enricher reads
 * (see `LATENCY_SIGNALS`, `KV_CACHE_SIGNALS`, …), and add its unit test in
 * `test/unit/enrich/causes.test.ts`. See the README (Enrichment).
 */
import type { AlertKind } from '../types.js';

/** How a signal's value now is compared with a rule's threshold. */
export type Comparison = '>=' | '>' | '<=' | '<';

/**
 * One piece of evidence a rule needs:
 * - `{ signal, op, value }`: the signal's value now compares so with `value` (in the signal's unit:
 *   a ratio 0–1, seconds, a count, per second, MiB);
 * - `{ trend: 'growing' }`: the memory trend is real (positive and well fitted).
 */
export type Condition = { signal: string; op: Comparison; value: number } | { trend: 'growing' };

export interface CauseRule {
  /** Stable id, e.g. `kv_cache_pressure`. */
  id: string;
  /** Kinds of alert the rule applies to. */
  kinds: readonly AlertKind[];
  /** All must hold. */
  when: readonly Condition[];
  /** One line: what is probably happening. */
  cause: string;
  /** One line: what to try. */
  action: string;
}

/** KV-cache usage from which the cache counts as nearly full (ratio 0–1). */
export const KV_CACHE_FULL_RATIO = 0.9;

/**
 * A mean prompt this long (tokens) is long: more than the 2,048-token prefill chunk vLLM schedules
 * per step by default (`--max-num-batched-tokens`), so one prompt needs several steps.
 */
export const LONG_PROMPT_TOKENS = 2048;

/** An aborted share of finished requests (ratio 0–1) from which aborts explain errors. */
export const HIGH_ABORT_RATIO = 0.1;

export const CAUSE_RULES: readonly CauseRule[] = [
  {
    id: 'kv_cache_pressure',
    kinds: ['kv_cache', 'latency', 'queue'],
    when: [
      { signal: 'kv_cache_usage_ratio', op: '>=', value: KV_CACHE_FULL_RATIO },
      { signal: 'preemptions_per_second', op: '>', value: 0 },
    ],
    cause: 'KV-cache pressure: the cache is nearly full and the scheduler preempts running requests to make room.',
    action: 'Give the KV cache more memory (--gpu-memory-utilization), admit fewer sequences (--max-num-seqs), or enable prefix caching (--enable-prefix-caching).',
  },
  {
    id: 'queueing',
    kinds: ['latency', 'queue'],
    when: [{ signal: 'requests_waiting', op: '>=', value: 1 }],
    cause: 'Queueing: requests wait for a place in the running batch; demand exceeds what the engine runs at once.',
    action: 'Add capacity (replicas), or raise --max-num-seqs while the KV cache has room.',
  },
  {
    id: 'prefill_bound',
    kinds: ['latency'],
    when: [
      { signal: 'requests_waiting', op: '<', value: 1 },
      { signal: 'prompt_tokens_mean', op: '>=', value: LONG_PROMPT_TOKENS },
    ],
    cause: 'Prefill-bound: nothing is queued, but long prompts take long to process before the first token.',
    action: 'Enable chunked prefill (--enable-chunked-prefill, tune --max-num-batched-tokens), cap --max-model-len, or cache shared prefixes (--enable-prefix-caching).',
  },
  {
    id: 'memory_leak',
    kinds: ['gpu_memory'],
    when: [{ trend: 'growing' }],
    cause: 'Memory leak: memory grows steadily, and not in garbage-collection waves.',
    action: 'Plan a restart of the engine before it runs out, and profile its memory to find what grows.',
  },
  {
    id: 'client_aborts',
    kinds: ['error_rate'],
    when: [{ signal: 'aborted_ratio', op: '>=', value: HIGH_ABORT_RATIO }],
    cause: 'Client aborts: clients give up on requests before they finish (time-outs, cancelled streams).',
    action: 'Compare client time-outs with TTFT; aborts grow when requests queue.',
  },
];
