/** The likely-cause rules one by one: each holds on its evidence, and stays silent without it. */
import { describe, expect, it } from 'vitest';
import { CAUSE_RULES, type CauseRule } from '../../../../shared/enrich/causes/rules.js';
import { checkCondition, likelyCause, type Facts } from '../../../../shared/enrich/causes/likely-cause.js';
import type { MemoryTrend, Signal, SignalUnit } from '../../../../shared/enrich/types.js';

const UNITS: Record<string, [string, SignalUnit]> = {
  requests_waiting: ['Requests waiting', 'count'],
  kv_cache_usage_ratio: ['KV cache usage', 'ratio'],
  preemptions_per_second: ['Preemptions', 'per_second'],
  prompt_tokens_mean: ['Mean prompt (tokens)', 'count'],
  requests_deferred: ['Waiting, deferred (KV transfer, LoRA)', 'count'],
  requests_waiting_capacity: ['Waiting for capacity', 'count'],
};

/** Signals with these values now (`null` = no data). */
function facts(values: Record<string, number | null>, trend?: MemoryTrend): Facts {
  const signals = Object.entries(values).map(([name, value]): Signal => {
    const [label, unit] = UNITS[name] ?? [name, 'none'];
    return { name, label, unit, value, query: name };
  });
  return trend ? { signals, trend } : { signals };
}

const LEAK: MemoryTrend = {
  growthMiBPerHour: 500,
  rSquared: 0.99,
  usedMiB: 33_000,
  capacityMiB: 81_559,
  hoursToFull: 97.1,
  windowSeconds: 21_600,
  points: 361,
  growing: true,
};
const rule = (id: string): CauseRule => CAUSE_RULES.find((r) => r.id === id)!;

describe('likely-cause rules', () => {
  it('has unique ids and a cause and an action for each rule', () => {
    expect(new Set(CAUSE_RULES.map((r) => r.id)).size).toBe(CAUSE_RULES.length);
    for (const r of CAUSE_RULES) {
      expect(r.cause.length).toBeGreaterThan(10);
      expect(r.action.length).toBeGreaterThan(10);
      expect(r.when.length).toBeGreaterThan(0);
    }
  });

  describe('kv_cache_pressure', () => {
    it('holds when the cache is ≥ 90% full and preemptions happen, stating both', () => {
      expect(likelyCause('kv_cache', facts({ kv_cache_usage_ratio: 0.97, preemptions_per_second: 0.5 }))).toEqual({
        rule: 'kv_cache_pressure',
        cause: rule('kv_cache_pressure').cause,
        action: rule('kv_cache_pressure').action,
        evidence: ['KV cache usage 97% (≥ 90%)', 'Preemptions 0.5/s (> 0/s)'],
      });
    });

    it('is silent with a full cache but no preemptions, or preemptions on a cache with room', () => {
      expect(likelyCause('kv_cache', facts({ kv_cache_usage_ratio: 0.97, preemptions_per_second: 0 }))).toBeUndefined();
      expect(likelyCause('kv_cache', facts({ kv_cache_usage_ratio: 0.6, preemptions_per_second: 2 }))).toBeUndefined();
    });

    it('wins over queueing on a latency alert when both hold (the queue comes from the full cache)', () => {
      expect(
        likelyCause('latency', facts({ requests_waiting: 20, kv_cache_usage_ratio: 0.95, preemptions_per_second: 1 }))
          ?.rule,
      ).toBe('kv_cache_pressure');
    });
  });

  describe('queueing', () => {
    it('holds on a latency or queue alert with requests waiting', () => {
      expect(
        likelyCause('latency', facts({ requests_waiting: 40, kv_cache_usage_ratio: 0.6, preemptions_per_second: 0 })),
      ).toMatchObject({
        rule: 'queueing',
        evidence: ['Requests waiting 40 (≥ 1)'],
      });
      expect(likelyCause('queue', facts({ requests_waiting: 85 }))?.rule).toBe('queueing');
    });

    it('does not apply to other kinds', () => {
      expect(likelyCause('kv_cache', facts({ requests_waiting: 40 }))).toBeUndefined();
    });
  });

  describe('deferred_requests', () => {
    it('names requests deferred for a KV transfer or a LoRA slot, with none waiting for capacity, before queueing', () => {
      const deferred = { requests_waiting: 12, requests_deferred: 12, requests_waiting_capacity: 0 };
      expect(likelyCause('queue', facts(deferred))).toMatchObject({
        rule: 'deferred_requests',
        evidence: ['Waiting, deferred (KV transfer, LoRA) 12 (≥ 1)', 'Waiting for capacity 0 (< 1)'],
      });
      expect(likelyCause('latency', facts(deferred))?.rule).toBe('deferred_requests');
    });

    it('gives way to queueing when requests also wait for capacity, and is silent without the split (older vLLM)', () => {
      expect(
        likelyCause('queue', facts({ requests_waiting: 20, requests_deferred: 12, requests_waiting_capacity: 8 }))
          ?.rule,
      ).toBe('queueing');
      expect(likelyCause('queue', facts({ requests_waiting: 20, requests_deferred: null }))?.rule).toBe('queueing');
    });
  });

  describe('prefill_bound', () => {
    it('holds with nothing waiting and long prompts', () => {
      expect(likelyCause('latency', facts({ requests_waiting: 0, prompt_tokens_mean: 12_000 }))).toMatchObject({
        rule: 'prefill_bound',
        evidence: ['Requests waiting 0 (< 1)', 'Mean prompt (tokens) 12,000 (≥ 2,048)'],
      });
    });

    it('is silent with short prompts, or when the queue depth is unknown', () => {
      expect(likelyCause('latency', facts({ requests_waiting: 0, prompt_tokens_mean: 500 }))).toBeUndefined();
      expect(likelyCause('latency', facts({ requests_waiting: null, prompt_tokens_mean: 12_000 }))).toBeUndefined();
    });
  });

  describe('memory_leak', () => {
    it('holds on a real upward trend, with the trend as evidence', () => {
      expect(likelyCause('gpu_memory', facts({}, LEAK))).toMatchObject({
        rule: 'memory_leak',
        evidence: ['Memory trend +500 MiB/h · full in ~4 d · R² 0.99'],
      });
    });

    it('is silent when the trend is not real, or there is none', () => {
      expect(likelyCause('gpu_memory', facts({}, { ...LEAK, growing: false, hoursToFull: null }))).toBeUndefined();
      expect(likelyCause('gpu_memory', facts({}))).toBeUndefined();
    });
  });
});

describe('checkCondition', () => {
  it('never holds on no data, NaN or an absent signal', () => {
    const condition = { signal: 'requests_waiting', op: '<', value: 1 } as const;
    expect(checkCondition(condition, facts({ requests_waiting: null }))).toBeUndefined();
    expect(checkCondition(condition, facts({ requests_waiting: Number.NaN }))).toBeUndefined();
    expect(checkCondition(condition, facts({}))).toBeUndefined();
    expect(checkCondition({ signal: 'requests_waiting', op: '<=', value: 0 }, facts({ requests_waiting: 0 }))).toBe(
      'Requests waiting 0 (≤ 0)',
    );
  });

  it('lets a rule table be extended: a new rule is found in order', () => {
    const custom: CauseRule = {
      id: 'custom',
      kinds: ['unknown'],
      when: [{ signal: 'x', op: '>', value: 1 }],
      cause: 'c',
      action: 'a',
      zh: { cause: '原因', action: '建议' },
    };
    expect(likelyCause('unknown', facts({ x: 2 }), [...CAUSE_RULES, custom])).toEqual({
      rule: 'custom',
      cause: 'c',
      action: 'a',
      evidence: ['x 2 (> 1)'],
    });
    expect(likelyCause('unknown', facts({ x: 2 }))).toBeUndefined();
  });

  describe('target down (VLLMServerDown)', () => {
    it('gpu_fault: an XID on the host names the GPU, before whatever the other targets do', () => {
      expect(likelyCause('target_down', facts({ gpu_xid_last: 79, job_targets_up: 2, job_targets: 3 }))).toMatchObject({
        rule: 'gpu_fault',
        evidence: ['gpu_xid_last 79 (> 0)'],
      });
      expect(likelyCause('target_down', facts({ gpu_xid_last: 79, job_targets_up: 0, job_targets: 3 }))?.rule).toBe(
        'gpu_fault',
      );
    });

    it('scrape_path_down: every target of a job of several down', () => {
      expect(likelyCause('target_down', facts({ gpu_xid_last: 0, job_targets_up: 0, job_targets: 2 }))).toMatchObject({
        rule: 'scrape_path_down',
        evidence: ['job_targets 2 (≥ 2)', 'job_targets_up 0 (< 1)'],
      });
    });

    it("server_process_down: the job's other targets answer, or the job has only this one", () => {
      expect(likelyCause('target_down', facts({ gpu_xid_last: 0, job_targets_up: 1, job_targets: 2 }))).toMatchObject({
        rule: 'server_process_down',
        evidence: ['job_targets_up 1 (≥ 1)'],
      });
      expect(likelyCause('target_down', facts({ job_targets_up: 0, job_targets: 1 }))?.rule).toBe(
        'server_process_down',
      );
    });

    it('says nothing without evidence (no up series for the job, no DCGM)', () => {
      expect(likelyCause('target_down', facts({}))).toBeUndefined();
      expect(
        likelyCause('target_down', facts({ gpu_xid_last: null, job_targets_up: null, job_targets: null })),
      ).toBeUndefined();
    });
  });
});
