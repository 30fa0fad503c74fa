/**
 * The likely-cause rules for rows 3–7 of the vLLM troubleshooting table (docs/enrichment.md, "Likely-cause rules"):
 * each holds on its evidence at its thresholds, states the values with units, and stays silent one
 * step past a threshold or without the evidence (no DCGM data: never a guess).
 */
import { describe, expect, it } from 'vitest';
import {
  CAUSE_RULES,
  FEW_RUNNING_REQUESTS,
  FLAT_THROUGHPUT_FACTOR,
  GPU_BUSY_RATIO,
  GPU_IDLE_RATIO,
  GPU_MEMORY_OVER_SHARE_FACTOR,
  HIGH_4XX_RATIO,
  LENGTH_CAPPED_RATIO,
  SLOW_DECODE_SECONDS,
  TAIL_TO_MEDIAN_FACTOR,
} from '../../../../shared/enrich/causes/rules.js';
import { checkCondition, likelyCause, type Facts } from '../../../../shared/enrich/causes/likely-cause.js';
import type { Condition } from '../../../../shared/enrich/causes/rules.js';
import { ERROR_RATE_GPU_SIGNALS, ERROR_RATE_SIGNALS } from '../../../../shared/enrich/kinds/error-rate.js';
import { TARGET_DOWN_GPU_SIGNALS, TARGET_DOWN_SIGNALS } from '../../../../shared/enrich/kinds/target-down.js';
import { KV_CACHE_GPU_SIGNALS, KV_CACHE_SIGNALS } from '../../../../shared/enrich/kinds/kv-cache.js';
import { LATENCY_GPU_SIGNALS, LATENCY_SIGNALS } from '../../../../shared/enrich/kinds/latency.js';
import { QUEUE_GPU_SIGNALS, QUEUE_SIGNALS } from '../../../../shared/enrich/kinds/queue.js';
// SGLang's error-rate profile reads its aborted share besides vLLM's signals.
import { ABORTED_RATIO } from '../../../../shared/enrich/signals/sglang.js';
import type { AlertKind, Signal, SignalUnit } from '../../../../shared/enrich/types.js';

const UNITS: Record<string, [string, SignalUnit]> = {
  gpu_utilization_ratio: ['GPU utilization', 'ratio'],
  gpu_memory_used_ratio: ['GPU memory used', 'ratio'],
  requests_waiting: ['Requests waiting', 'count'],
  requests_running: ['Requests running', 'count'],
  kv_cache_usage_ratio: ['KV cache usage', 'ratio'],
  preemptions_per_second: ['Preemptions', 'per_second'],
  generation_tokens_per_second: ['Generation tokens', 'per_second'],
  itl_p95_seconds: ['Inter-token latency p95', 'seconds'],
  e2e_p50_seconds: ['E2E latency p50', 'seconds'],
  e2e_p99_seconds: ['E2E latency p99', 'seconds'],
  prompt_tokens_mean: ['Mean prompt (tokens)', 'count'],
  http_5xx_ratio: ['HTTP 5xx share', 'ratio'],
  http_4xx_ratio: ['HTTP 4xx share', 'ratio'],
  rejected_ratio: ['Rejected share (4xx, vLLM)', 'ratio'],
  gpu_memory_configured_ratio: ['GPU memory share configured', 'ratio'],
  requests_deferred: ['Waiting, deferred (KV transfer, LoRA)', 'count'],
  requests_waiting_capacity: ['Waiting for capacity', 'count'],
  failed_per_second: ['Failed (vLLM)', 'per_second'],
  tpot_mean_seconds: ['Mean time per output token', 'seconds'],
  length_capped_ratio: ['Length-capped share', 'ratio'],
};

type Reading = number | null | [atStart: number | null, now: number | null];

/** Signals with these values (`[then, now]` for a value when fired too; `null` = no data). */
function facts(values: Record<string, Reading>): Facts {
  const signals = Object.entries(values).map(([name, reading]): Signal => {
    const [label, unit] = UNITS[name] ?? [name, 'none'];
    const [atStart, value] = Array.isArray(reading) ? reading : [undefined, reading];
    return { name, label, unit, value, query: name, ...(atStart === undefined ? {} : { atStart }) };
  });
  return { signals };
}

const cause = (kind: AlertKind, values: Record<string, Reading>) => likelyCause(kind, facts(values));
const ruleOf = (kind: AlertKind, values: Record<string, Reading>) => cause(kind, values)?.rule;
const without = (values: Record<string, Reading>, name: string) =>
  Object.fromEntries(Object.entries(values).filter(([n]) => n !== name));

describe('row 3 — GPU busy, throughput flat: decode_bound', () => {
  const busy = {
    gpu_utilization_ratio: 0.97,
    generation_tokens_per_second: [1200, 1210] as Reading,
    itl_p95_seconds: 0.12,
    requests_waiting: 12,
  };

  it('holds on a busy GPU, flat tokens/s since fired and slow tokens, before queueing', () => {
    expect(cause('queue', busy)).toMatchObject({
      rule: 'decode_bound',
      evidence: [
        'GPU utilization 97% (≥ 90%)',
        'Generation tokens 1,200/s → 1,210/s since fired (×1.01, ≤ ×1.1)',
        'Inter-token latency p95 120 ms (≥ 50 ms)',
      ],
    });
    expect(ruleOf('latency', busy)).toBe('decode_bound');
  });

  it('holds at each threshold and not one step past it', () => {
    const at = {
      ...busy,
      gpu_utilization_ratio: GPU_BUSY_RATIO,
      generation_tokens_per_second: [1000, 1000 * FLAT_THROUGHPUT_FACTOR] as Reading,
      itl_p95_seconds: SLOW_DECODE_SECONDS,
    };
    expect(ruleOf('queue', at)).toBe('decode_bound');
    expect(ruleOf('queue', { ...at, gpu_utilization_ratio: 0.89 })).toBe('queueing');
    expect(ruleOf('queue', { ...at, generation_tokens_per_second: [1000, 1111] })).toBe('queueing');
    expect(ruleOf('queue', { ...at, itl_p95_seconds: 0.049 })).toBe('queueing');
  });

  it('on a queue alert, the mean time per output token stands for the inter-token latency', () => {
    const queue = { ...without(busy, 'itl_p95_seconds'), tpot_mean_seconds: 0.08 };
    expect(cause('queue', queue)?.evidence[2]).toBe('Mean time per output token 80 ms (≥ 50 ms)');
    expect(ruleOf('queue', { ...queue, tpot_mean_seconds: 0.02 })).toBe('queueing');
  });

  it('is silent without DCGM data, or without the value when fired', () => {
    expect(ruleOf('queue', without(busy, 'gpu_utilization_ratio'))).toBe('queueing');
    expect(ruleOf('queue', { ...busy, gpu_utilization_ratio: null })).toBe('queueing');
    expect(ruleOf('queue', { ...busy, generation_tokens_per_second: 1210 })).toBe('queueing');
    expect(ruleOf('queue', { ...busy, generation_tokens_per_second: [0, 1210] })).toBe('queueing');
    expect(ruleOf('latency', without({ ...busy, requests_waiting: 0 }, 'gpu_utilization_ratio'))).toBeUndefined();
  });
});

describe('row 4 — GPU idle, memory full: memory_bound', () => {
  const full = {
    gpu_utilization_ratio: 0.3,
    kv_cache_usage_ratio: 0.98,
    requests_running: 6,
    preemptions_per_second: 0.2,
  };

  it('holds on an idle GPU with a full KV cache, before kv_cache_pressure', () => {
    expect(cause('kv_cache', full)).toMatchObject({
      rule: 'memory_bound',
      evidence: ['GPU utilization 30% (< 50%)', 'KV cache usage 98% (≥ 90%)', 'Requests running 6 (≥ 1)'],
    });
    expect(cause('kv_cache', full)?.action).toContain('--max-model-len');
    expect(ruleOf('latency', full)).toBe('memory_bound');
  });

  it('holds just below the idle threshold, not at it; not with room in the cache or nothing running', () => {
    expect(ruleOf('kv_cache', { ...full, gpu_utilization_ratio: GPU_IDLE_RATIO - 0.001 })).toBe('memory_bound');
    expect(ruleOf('kv_cache', { ...full, gpu_utilization_ratio: GPU_IDLE_RATIO })).toBe('kv_cache_pressure');
    expect(ruleOf('kv_cache', { ...full, kv_cache_usage_ratio: 0.89 })).toBeUndefined();
    expect(ruleOf('kv_cache', { ...full, requests_running: 0 })).toBe('kv_cache_pressure');
  });

  it('is silent without DCGM data (the existing KV-cache rule speaks instead)', () => {
    expect(ruleOf('kv_cache', without(full, 'gpu_utilization_ratio'))).toBe('kv_cache_pressure');
    expect(
      ruleOf('kv_cache', without({ ...full, preemptions_per_second: 0 }, 'gpu_utilization_ratio')),
    ).toBeUndefined();
  });
});

describe('row 5 — GPU idle, few requests running: low_concurrency', () => {
  const few = {
    gpu_utilization_ratio: 0.12,
    requests_running: 1,
    requests_waiting: 0,
    generation_tokens_per_second: 45,
    prompt_tokens_mean: 600,
  };

  it('holds on an idle GPU with one or two requests running and none waiting', () => {
    expect(cause('latency', few)).toMatchObject({
      rule: 'low_concurrency',
      evidence: [
        'GPU utilization 12% (< 50%)',
        'Requests running 1 (≤ 2)',
        'Requests waiting 0 (< 1)',
        'Generation tokens 45/s (> 0/s)',
      ],
    });
    expect(ruleOf('latency', { ...few, requests_running: FEW_RUNNING_REQUESTS })).toBe('low_concurrency');
  });

  it('is silent with more running, a queue, no traffic at all, or long prompts (prefill-bound speaks)', () => {
    expect(ruleOf('latency', { ...few, requests_running: 3 })).toBeUndefined();
    expect(ruleOf('latency', { ...few, requests_waiting: 4 })).toBe('queueing');
    expect(ruleOf('latency', { ...few, generation_tokens_per_second: 0 })).toBeUndefined();
    expect(ruleOf('latency', { ...few, prompt_tokens_mean: 12_000 })).toBe('prefill_bound');
  });

  it('is silent without DCGM data', () => {
    expect(ruleOf('latency', without(few, 'gpu_utilization_ratio'))).toBeUndefined();
  });
});

describe('row 6 — an occasional request very slow: preemption_reprefill', () => {
  const tail = {
    e2e_p50_seconds: 4,
    e2e_p99_seconds: 32,
    preemptions_per_second: 0.3,
    kv_cache_usage_ratio: 0.8,
    requests_waiting: 0,
  };

  it('holds when p99 is at least 5× p50 and requests are preempted, naming both', () => {
    expect(cause('latency', tail)).toMatchObject({
      rule: 'preemption_reprefill',
      evidence: ['E2E latency p99 32.0 s = 8× E2E latency p50 4.00 s (≥ 5×)', 'Preemptions 0.3/s (> 0/s)'],
    });
    expect(ruleOf('latency', { ...tail, e2e_p99_seconds: 4 * TAIL_TO_MEDIAN_FACTOR })).toBe('preemption_reprefill');
  });

  it('is silent with a short tail, without preemptions, or without the quantiles (or p50 no requests)', () => {
    expect(ruleOf('latency', { ...tail, e2e_p99_seconds: 19.9 })).toBeUndefined();
    expect(ruleOf('latency', { ...tail, preemptions_per_second: 0 })).toBeUndefined();
    expect(ruleOf('latency', without(tail, 'e2e_p50_seconds'))).toBeUndefined();
    expect(ruleOf('latency', { ...tail, e2e_p50_seconds: Number.NaN })).toBeUndefined();
    expect(ruleOf('latency', { ...tail, e2e_p50_seconds: 0 })).toBeUndefined();
  });

  it('gives way to kv_cache_pressure when the cache is full (the cause of the preemptions)', () => {
    expect(ruleOf('latency', { ...tail, kv_cache_usage_ratio: 0.95 })).toBe('kv_cache_pressure');
  });
});

describe('row 7 — success rate low: out_of_memory, context_length_exceeded, input_validation', () => {
  it("out of memory: failures (either generation's evidence) with GPU memory beyond the share the server was configured to take", () => {
    expect(
      cause('error_rate', { http_5xx_ratio: 0.2, gpu_memory_used_ratio: 0.99, gpu_memory_configured_ratio: 0.9 }),
    ).toMatchObject({
      rule: 'out_of_memory',
      evidence: ['HTTP 5xx share 20% (> 0%)', 'GPU memory used 99% = 1.1× GPU memory share configured 90% (≥ 1.02×)'],
    });
    expect(
      cause('error_rate', {
        http_5xx_ratio: null,
        failed_per_second: 0.5,
        gpu_memory_used_ratio: 0.9 * GPU_MEMORY_OVER_SHARE_FACTOR,
        gpu_memory_configured_ratio: 0.9,
      })?.rule,
    ).toBe('out_of_memory');
  });

  it("out of memory is silent at the server's steady state (95% used at 0.95), with no failures, or without DCGM data or the configured share", () => {
    const full = { http_5xx_ratio: 0.2, gpu_memory_used_ratio: 0.96, gpu_memory_configured_ratio: 0.95 };
    expect(ruleOf('error_rate', full)).toBeUndefined();
    expect(
      ruleOf('error_rate', { ...full, gpu_memory_used_ratio: 0.9 * 1.01, gpu_memory_configured_ratio: 0.9 }),
    ).toBeUndefined();
    expect(ruleOf('error_rate', { ...full, http_5xx_ratio: 0, gpu_memory_used_ratio: 0.99 })).toBeUndefined();
    expect(ruleOf('error_rate', { http_5xx_ratio: 0.2, gpu_memory_configured_ratio: 0.9 })).toBeUndefined();
    expect(ruleOf('error_rate', { http_5xx_ratio: 0.2, gpu_memory_used_ratio: 0.99 })).toBeUndefined();
  });

  it('context length exceeded: at least 25% of finished requests capped by length', () => {
    expect(cause('error_rate', { length_capped_ratio: 0.4, http_4xx_ratio: 0.3 })).toMatchObject({
      rule: 'context_length_exceeded',
      evidence: ['Length-capped share 40% (≥ 25%)'],
    });
    expect(ruleOf('error_rate', { length_capped_ratio: LENGTH_CAPPED_RATIO })).toBe('context_length_exceeded');
    expect(ruleOf('error_rate', { length_capped_ratio: 0.24 })).toBeUndefined();
  });

  it('input validation: at least 10% of HTTP requests answered 4xx', () => {
    expect(cause('error_rate', { http_4xx_ratio: 0.3, length_capped_ratio: 0.05 })).toMatchObject({
      rule: 'input_validation',
      evidence: ['HTTP 4xx share 30% (≥ 10%)'],
    });
    expect(ruleOf('error_rate', { http_4xx_ratio: HIGH_4XX_RATIO })).toBe('input_validation');
    expect(ruleOf('error_rate', { http_4xx_ratio: 0.09 })).toBeUndefined();
    expect(ruleOf('error_rate', { http_4xx_ratio: Number.NaN })).toBeUndefined();
  });

  it("input validation: or vLLM's own count of rejected requests (4xx) at least 10% of those it answered", () => {
    expect(cause('error_rate', { http_4xx_ratio: null, rejected_ratio: 0.3 })).toMatchObject({
      rule: 'input_validation',
      evidence: ['Rejected share (4xx, vLLM) 30% (≥ 10%)'],
    });
    expect(ruleOf('error_rate', { rejected_ratio: 0.09 })).toBeUndefined();
  });

  it('none of them answers for another kind', () => {
    expect(
      ruleOf('latency', {
        http_4xx_ratio: 0.5,
        length_capped_ratio: 0.5,
        http_5xx_ratio: 0.5,
        gpu_memory_used_ratio: 1,
      }),
    ).toBeUndefined();
  });
});

describe('conditions', () => {
  it('a factor of another signal never holds on a zero, NaN or absent base', () => {
    const c = { signal: 'e2e_p99_seconds', op: '>=', value: 5, of: 'e2e_p50_seconds' } as const;
    expect(checkCondition(c, facts({ e2e_p99_seconds: 10, e2e_p50_seconds: 0 }))).toBeUndefined();
    expect(checkCondition(c, facts({ e2e_p99_seconds: 10 }))).toBeUndefined();
    expect(checkCondition(c, facts({ e2e_p99_seconds: Number.POSITIVE_INFINITY, e2e_p50_seconds: 1 }))).toBeUndefined();
  });

  it('any: the first condition that holds is the evidence; none holding is silence', () => {
    const c = {
      any: [
        { signal: 'a', op: '>', value: 1 },
        { signal: 'b', op: '>', value: 1 },
      ],
    } as const;
    expect(checkCondition(c, facts({ a: 0, b: 2 }))).toBe('b 2 (> 1)');
    expect(checkCondition(c, facts({ a: null, b: 0 }))).toBeUndefined();
  });

  it('every rule needing GPU utilization names it, so each is silent without DCGM', () => {
    const needsGpu = CAUSE_RULES.filter((r) => JSON.stringify(r.when).includes('gpu_')).map((r) => r.id);
    expect(needsGpu).toEqual(['memory_bound', 'decode_bound', 'low_concurrency', 'out_of_memory', 'gpu_fault']);
  });
});

describe('every signal a rule names is read for one of its kinds', () => {
  /** The signal names each kind's enricher reads (a breakdown as `name:`, any value). */
  const READ: Record<AlertKind, string[]> = {
    latency: [...LATENCY_SIGNALS, ...LATENCY_GPU_SIGNALS].map((d) => d.name),
    queue: [...QUEUE_SIGNALS, ...QUEUE_GPU_SIGNALS].map((d) => d.name),
    kv_cache: [...KV_CACHE_SIGNALS, ...KV_CACHE_GPU_SIGNALS].map((d) => d.name),
    error_rate: [...ERROR_RATE_SIGNALS, ...ERROR_RATE_GPU_SIGNALS, ABORTED_RATIO].map((d) =>
      'breakdown' in d && d.breakdown ? `${d.name}:` : d.name,
    ),
    gpu_memory: ['gpu_memory_used_mib', 'gpu_memory_total_mib', 'memory_used_mib'],
    target_down: [...TARGET_DOWN_SIGNALS, ...TARGET_DOWN_GPU_SIGNALS].map((d) => d.name),
    unknown: ['expression_value'],
  };
  const names = (c: Condition): string[] =>
    'any' in c ? c.any.flatMap(names) : 'trend' in c ? [] : 'of' in c ? [c.signal, c.of] : [c.signal];
  const isRead = (kind: AlertKind, name: string) =>
    READ[kind].some((n) => n === name || (n.endsWith(':') && name.startsWith(n)));

  it.each(CAUSE_RULES.map((r) => [r.id, r] as const))('%s', (_, rule) => {
    for (const condition of rule.when) {
      // An any-of holds when one of its names is read; every other condition's names must all be.
      const wanted = names(condition);
      const read = wanted.filter((name) => rule.kinds.some((kind) => isRead(kind, name)));
      if ('any' in condition) expect(read.length, JSON.stringify(condition)).toBeGreaterThan(0);
      else expect(read, `${rule.id} reads ${wanted.join(', ')}`).toEqual(wanted);
    }
  });
});
