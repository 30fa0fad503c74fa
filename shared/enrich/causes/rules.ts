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
 * - `{ signal, op, value, of }`: the signal's value now ÷ signal `of`'s value now (a plain factor,
 *   e.g. p99 ÷ p50 ≥ 5) compares so with `value`;
 * - `{ signal, op, value, sinceFired: true }`: the signal's value now ÷ its value when the alert
 *   fired (a plain factor, e.g. ≤ 1.1 for "flat") compares so with `value`;
 * - `{ any }`: at least one of the conditions holds (the first that holds is the evidence), for
 *   evidence that either engine generation gives under a different name;
 * - `{ trend: 'growing' }`: the memory trend is real (positive and well fitted).
 */
export type Condition =
  | { signal: string; op: Comparison; value: number }
  | { signal: string; op: Comparison; value: number; of: string }
  | { signal: string; op: Comparison; value: number; sinceFired: true }
  | { any: readonly Condition[] }
  | { trend: 'growing' };

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

/** DCGM GPU utilization (ratio 0–1) from which the GPU counts as busy. */
export const GPU_BUSY_RATIO = 0.9;

/** DCGM GPU utilization (ratio 0–1) below which the GPU counts as mostly idle. */
export const GPU_IDLE_RATIO = 0.5;

/**
 * The GPU is mostly idle (DCGM utilization < {@link GPU_IDLE_RATIO}) or busy (≥ {@link GPU_BUSY_RATIO}):
 * the one condition on GPU utilization, so every rule reads it alike.
 */
function gpuUtilization(state: 'idle' | 'busy'): Condition {
  return state === 'idle' ? { signal: 'gpu_utilization_ratio', op: '<', value: GPU_IDLE_RATIO } : { signal: 'gpu_utilization_ratio', op: '>=', value: GPU_BUSY_RATIO };
}

/**
 * Generated tokens/s now ÷ when the alert fired, up to which throughput counts as flat (a plain
 * factor): less than 10% more tokens while the GPU is busy means the extra work did not turn into output.
 */
export const FLAT_THROUGHPUT_FACTOR = 1.1;

/**
 * Inter-token latency p95 (seconds) from which decoding is slow: 50 ms per token is 20 tokens/s per
 * sequence, below reading speed for a streamed answer.
 */
export const SLOW_DECODE_SECONDS = 0.05;

/** At most this many requests running is "few" (the troubleshooting table's "1–2"). */
export const FEW_RUNNING_REQUESTS = 2;

/** End-to-end latency p99 ÷ p50 (a plain factor) from which the tail is "occasional requests very slow". */
export const TAIL_TO_MEDIAN_FACTOR = 5;

/**
 * GPU memory used ÷ total (ratio 0–1) from which memory is exhausted: above vLLM's default
 * `--gpu-memory-utilization` of 0.9, so the engine's activation headroom is gone too.
 */
export const GPU_MEMORY_FULL_RATIO = 0.95;

/** A share of HTTP requests answered 4xx (ratio 0–1) from which rejected input explains failures. */
export const HIGH_4XX_RATIO = 0.1;

/** A share of finished requests stopped at the length limit (ratio 0–1) from which context length explains failures. */
export const LENGTH_CAPPED_RATIO = 0.25;

export const CAUSE_RULES: readonly CauseRule[] = [
  {
    // Before kv_cache_pressure: an idle GPU says memory, not compute, limits the batch.
    id: 'memory_bound',
    kinds: ['kv_cache', 'latency', 'queue'],
    when: [gpuUtilization('idle'), { signal: 'kv_cache_usage_ratio', op: '>=', value: KV_CACHE_FULL_RATIO }, { signal: 'requests_running', op: '>=', value: 1 }],
    cause: 'Memory-bound: the KV cache is full while the GPU is mostly idle; the model is too large or contexts too long for the batch to grow.',
    action: 'Free memory for the KV cache: quantized weights (AWQ, GPTQ, FP8), a lower --max-model-len, or more GPUs (--tensor-parallel-size).',
  },
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
    id: 'preemption_reprefill',
    kinds: ['latency'],
    when: [
      { signal: 'e2e_p99_seconds', op: '>=', value: TAIL_TO_MEDIAN_FACTOR, of: 'e2e_p50_seconds' },
      { signal: 'preemptions_per_second', op: '>', value: 0 },
    ],
    cause: 'Preemption re-prefill: a few requests are very slow because they were preempted and had to be prefilled again.',
    action: 'Leave room in the KV cache (--gpu-memory-utilization, fewer --max-num-seqs) or enable prefix caching (--enable-prefix-caching) so a resumed request reuses its prefix.',
  },
  {
    // Before queueing: a busy GPU with flat output says why the queue grows.
    id: 'decode_bound',
    kinds: ['latency', 'queue'],
    when: [
      gpuUtilization('busy'),
      { signal: 'generation_tokens_per_second', op: '<=', value: FLAT_THROUGHPUT_FACTOR, sinceFired: true },
      // V1 names it inter-token latency (a quantile on latency alerts); queue alerts read the mean time per output token.
      {
        any: [
          { signal: 'itl_p95_seconds', op: '>=', value: SLOW_DECODE_SECONDS },
          { signal: 'tpot_mean_seconds', op: '>=', value: SLOW_DECODE_SECONDS },
        ],
      },
    ],
    cause: 'Decode-bound: the GPU is busy but tokens/s stays flat and each token is slow; little compute per request per step (long generations), or a quantized model on slower kernels.',
    action: 'Batch more per step (raise --max-num-seqs), use a faster kernel for the quantization (e.g. Marlin for GPTQ/AWQ, FP8 on Hopper) or speculative decoding, or add replicas.',
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
    // After prefill_bound: few requests with long prompts are slow prefill, not low concurrency.
    id: 'low_concurrency',
    kinds: ['latency'],
    when: [
      gpuUtilization('idle'),
      { signal: 'requests_running', op: '<=', value: FEW_RUNNING_REQUESTS },
      { signal: 'requests_waiting', op: '<', value: 1 },
      { signal: 'generation_tokens_per_second', op: '>', value: 0 },
    ],
    cause: 'Concurrency too low: only one or two requests run at a time and none wait, so the GPU idles between them.',
    action: "Send more requests at once (raise the client's concurrency or the router's per-replica limit); check --max-num-seqs is not set to 1–2.",
  },
  {
    id: 'memory_leak',
    kinds: ['gpu_memory'],
    when: [{ trend: 'growing' }],
    cause: 'Memory leak: memory grows steadily, and not in garbage-collection waves.',
    action: 'Plan a restart of the engine before it runs out, and profile its memory to find what grows.',
  },
  {
    id: 'out_of_memory',
    kinds: ['error_rate'],
    when: [
      {
        any: [
          { signal: 'http_5xx_ratio', op: '>', value: 0 },
          { signal: 'failed_per_second', op: '>', value: 0 },
        ],
      },
      { signal: 'gpu_memory_used_ratio', op: '>=', value: GPU_MEMORY_FULL_RATIO },
    ],
    cause: 'Out of memory: requests fail while the GPU memory is exhausted; the engine probably hit CUDA out-of-memory (often prefilling a large batch).',
    action: 'Leave headroom: lower --gpu-memory-utilization, --max-num-batched-tokens or --max-num-seqs; look for "CUDA out of memory" in the engine log.',
  },
  {
    id: 'context_length_exceeded',
    kinds: ['error_rate'],
    when: [{ signal: 'length_capped_ratio', op: '>=', value: LENGTH_CAPPED_RATIO }],
    cause: 'Context length exceeded: many requests stop at the length limit (prompt plus output reach --max-model-len or max_tokens); longer prompts are rejected outright.',
    action: 'Compare prompt lengths with --max-model-len; raise it if the KV cache has room, or have clients trim prompts and set max_tokens.',
  },
  {
    id: 'input_validation',
    kinds: ['error_rate'],
    when: [{ signal: 'http_4xx_ratio', op: '>=', value: HIGH_4XX_RATIO }],
    cause: 'Input validation: the API server rejects requests (HTTP 4xx) before they reach the engine: malformed parameters, an unknown model name, or prompts over the context length.',
    action: "Read the 400 answers in the API server's log (they name the field); check the clients' model name, parameters and prompt lengths.",
  },
  {
    // First: any XID on the host's GPUs in the last 5 minutes explains a dead server whatever the other targets do.
    id: 'gpu_fault',
    kinds: ['target_down'],
    when: [{ signal: 'gpu_xid_last', op: '>', value: 0 }],
    cause: "GPU fault: a GPU of the server's host reported an XID error (79: fallen off the bus; 48, 94, 95: ECC; 119, 120: GSP); the engine's CUDA context died with it.",
    action: 'Drain the node: read `dmesg | grep -i xid` and `nvidia-smi -q` on the host, reset the GPU or reboot the node, then restart the server elsewhere meanwhile.',
  },
  {
    // Every target of the job down at once points at what they share, not at one server.
    id: 'scrape_path_down',
    kinds: ['target_down'],
    when: [
      { signal: 'job_targets', op: '>=', value: 2 },
      { signal: 'job_targets_up', op: '<', value: 1 },
    ],
    cause: 'Scrape path down: every target of the job fails its scrape at once; the network, service discovery or Prometheus itself, more likely than every server.',
    action:
      "Open Prometheus's /targets page for the scrape error; check the network to the servers, the job's service discovery and NetworkPolicies; curl one server's /metrics from Prometheus's host.",
  },
  {
    // The job's other targets answer (or it has no other): this server's process or pod.
    id: 'server_process_down',
    kinds: ['target_down'],
    when: [
      {
        any: [
          { signal: 'job_targets_up', op: '>=', value: 1 },
          { signal: 'job_targets', op: '<=', value: 1 },
        ],
      },
    ],
    cause: 'Server down: this vLLM server stopped answering scrapes while the rest of its job (if it has other targets) answers; the process exited, hangs, or its pod restarts.',
    action:
      'Check the pod or process (`kubectl describe pod`: OOMKilled, CrashLoopBackOff, evicted; `systemctl status`), its last log lines (CUDA errors, out of memory) and the node (NotReady, dmesg OOM killer).',
  },
];
