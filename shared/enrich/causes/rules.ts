/**
 * The likely-cause rules, as data. A rule holds when every one of its conditions holds on the
 * signals (and trend) gathered for an alert of one of its kinds; the first rule that holds, in this
 * order, names the cause. A condition on a signal with no data or NaN never holds, so missing
 * evidence means silence, not a guess.
 *
 * To add a rule: append an entry (most specific first) with its cause and action in English and in
 * Chinese (`zh`), name only signals the kind's enricher reads (see `LATENCY_SIGNALS`, `KV_CACHE_SIGNALS`, …)
 * and give each a Chinese label (`signals/labels.ts`), and add its unit test in
 * `test/unit/enrich/causes/`. See docs/enrichment.md (Likely-cause rules).
 */
import type { Engine } from '../engines.js';
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
  /** One line: what to try (vLLM's flags). */
  action: string;
  /** What to try on another engine, in its own flags (SGLang's `--mem-fraction-static`, …); default `action`. */
  actions?: Partial<Record<Engine, string>>;
  /**
   * The same two lines in Chinese (zh-CN channels and pages), as an ops engineer would say them: the
   * terms of the trade stay as they are written (KV cache, batch, prefill, flags and commands).
   */
  zh: { cause: string; action: string; actions?: Partial<Record<Engine, string>> };
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
  return state === 'idle'
    ? { signal: 'gpu_utilization_ratio', op: '<', value: GPU_IDLE_RATIO }
    : { signal: 'gpu_utilization_ratio', op: '>=', value: GPU_BUSY_RATIO };
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
 * GPU memory used ÷ the share the server was configured to take (`--gpu-memory-utilization`; a plain
 * factor) from which memory is exhausted. vLLM preallocates its share at start and sits there for
 * its whole life (at 0.95, "95% used" is its steady state, not a fault); using 2% more than its
 * share means something grew beyond the budget: activations of a large prefill, another process on
 * the GPU, fragmentation.
 */
export const GPU_MEMORY_OVER_SHARE_FACTOR = 1.02;

/** A share of requests answered 4xx (ratio 0–1) from which rejected input explains failures. */
export const HIGH_4XX_RATIO = 0.1;

/** A share of requests aborted by their clients (ratio 0–1; SGLang counts them) from which aborts explain failures. */
export const HIGH_ABORT_RATIO = 0.1;

/** A share of finished requests stopped at the length limit (ratio 0–1) from which context length explains failures. */
export const LENGTH_CAPPED_RATIO = 0.25;

export const CAUSE_RULES: readonly CauseRule[] = [
  {
    // Before kv_cache_pressure: an idle GPU says memory, not compute, limits the batch.
    id: 'memory_bound',
    kinds: ['kv_cache', 'latency', 'queue'],
    when: [
      gpuUtilization('idle'),
      { signal: 'kv_cache_usage_ratio', op: '>=', value: KV_CACHE_FULL_RATIO },
      { signal: 'requests_running', op: '>=', value: 1 },
    ],
    cause:
      'Memory-bound: the KV cache is full while the GPU is mostly idle; the model is too large or contexts too long for the batch to grow.',
    action:
      'Free memory for the KV cache: quantized weights (AWQ, GPTQ, FP8), a lower --max-model-len, or more GPUs (--tensor-parallel-size).',
    actions: {
      sglang:
        'Free memory for the KV cache: quantized weights (--quantization fp8, awq, gptq), a lower --context-length, or more GPUs (--tp).',
    },
    zh: {
      cause: '显存瓶颈：KV cache 已满，GPU 却大部分时间空闲；模型太大或上下文太长，batch 大不起来。',
      action:
        '给 KV cache 腾显存：换量化权重（AWQ、GPTQ、FP8）、调小 --max-model-len，或加 GPU（--tensor-parallel-size）。',
      actions: {
        sglang:
          '给 KV cache 腾显存：换量化权重（--quantization fp8、awq、gptq）、调小 --context-length，或加 GPU（--tp）。',
      },
    },
  },
  {
    id: 'kv_cache_pressure',
    kinds: ['kv_cache', 'latency', 'queue'],
    when: [
      { signal: 'kv_cache_usage_ratio', op: '>=', value: KV_CACHE_FULL_RATIO },
      { signal: 'preemptions_per_second', op: '>', value: 0 },
    ],
    cause: 'KV-cache pressure: the cache is nearly full and the scheduler preempts running requests to make room.',
    action:
      'Give the KV cache more memory (--gpu-memory-utilization), admit fewer sequences (--max-num-seqs), or enable prefix caching (--enable-prefix-caching).',
    actions: {
      sglang:
        'Give the KV cache more memory (--mem-fraction-static) or admit fewer requests (--max-running-requests); keep the radix cache on (no --disable-radix-cache) so shared prefixes are reused.',
    },
    zh: {
      cause: 'KV cache 压力大：缓存快满了，调度器在抢占运行中的请求来腾空间。',
      action:
        '给 KV cache 更多显存（--gpu-memory-utilization）、减少并发序列数（--max-num-seqs），或开启前缀缓存（--enable-prefix-caching）。',
      actions: {
        sglang:
          '给 KV cache 更多显存（--mem-fraction-static），或减少并发请求数（--max-running-requests）；保持 radix cache 开启（不要加 --disable-radix-cache），让公共前缀能复用。',
      },
    },
  },
  {
    id: 'preemption_reprefill',
    kinds: ['latency'],
    when: [
      { signal: 'e2e_p99_seconds', op: '>=', value: TAIL_TO_MEDIAN_FACTOR, of: 'e2e_p50_seconds' },
      { signal: 'preemptions_per_second', op: '>', value: 0 },
    ],
    cause:
      'Preemption re-prefill: a few requests are very slow because they were preempted and had to be prefilled again.',
    action:
      'Leave room in the KV cache (--gpu-memory-utilization, fewer --max-num-seqs) or enable prefix caching (--enable-prefix-caching) so a resumed request reuses its prefix.',
    actions: {
      sglang:
        'Leave room in the KV cache (--mem-fraction-static, a lower --max-running-requests) and keep the radix cache on, so a retracted request reuses its prefix.',
    },
    zh: {
      cause: '抢占后重新 prefill：少数请求被抢占后要重新 prefill，所以特别慢。',
      action:
        '给 KV cache 留余量（--gpu-memory-utilization、调小 --max-num-seqs），或开启前缀缓存（--enable-prefix-caching），让恢复的请求复用已算好的前缀。',
      actions: {
        sglang:
          '给 KV cache 留余量（--mem-fraction-static、调小 --max-running-requests），并保持 radix cache 开启，让被撤回的请求复用已算好的前缀。',
      },
    },
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
    cause:
      'Decode-bound: the GPU is busy but tokens/s stays flat and each token is slow; little compute per request per step (long generations), or a quantized model on slower kernels.',
    action:
      'Batch more per step (raise --max-num-seqs), use a faster kernel for the quantization (e.g. Marlin for GPTQ/AWQ, FP8 on Hopper) or speculative decoding, or add replicas.',
    actions: {
      sglang:
        'Batch more per step (raise --max-running-requests), speculative decoding (--speculative-algorithm), a faster kernel for the quantization, or add replicas (--dp).',
    },
    zh: {
      cause:
        'Decode 瓶颈：GPU 很忙，但 tokens/s 上不去，每个 token 都慢；每步每个请求的计算量太小（生成很长），或量化模型走了较慢的 kernel。',
      action:
        '每步多攒请求（调大 --max-num-seqs），给量化模型换更快的 kernel（如 GPTQ/AWQ 用 Marlin，Hopper 上用 FP8）或开投机解码，或者加副本。',
      actions: {
        sglang:
          '每步多攒请求（调大 --max-running-requests）、开投机解码（--speculative-algorithm）、给量化模型换更快的 kernel，或者加副本（--dp）。',
      },
    },
  },
  {
    // Before queueing: requests counted as waiting that no capacity would admit sooner.
    id: 'deferred_requests',
    kinds: ['latency', 'queue'],
    when: [
      { signal: 'requests_deferred', op: '>=', value: 1 },
      { signal: 'requests_waiting_capacity', op: '<', value: 1 },
    ],
    cause:
      'Deferred, not queued: the waiting requests wait for their KV cache to arrive from a prefill instance (disaggregated serving) or for a LoRA adapter slot, not for room in the batch; more replicas of this server would not shorten it.',
    action:
      "Look at the prefill side and the KV transfer (the connector's errors and latency, the network between prefill and decode pods); with LoRA, raise --max-loras or spread the adapters over servers.",
    zh: {
      cause:
        '请求在等待，但不是在排队：它们在等 prefill 实例传来的 KV cache（PD 分离部署）或 LoRA adapter 槽位，而不是等 batch 空位；给这个服务加副本也缩短不了。',
      action:
        '查 prefill 侧和 KV 传输（connector 的报错和延迟、prefill 与 decode pod 之间的网络）；用了 LoRA 的话，调大 --max-loras 或把 adapter 分散到多个服务上。',
    },
  },
  {
    id: 'queueing',
    kinds: ['latency', 'queue'],
    when: [{ signal: 'requests_waiting', op: '>=', value: 1 }],
    cause: 'Queueing: requests wait for a place in the running batch; demand exceeds what the engine runs at once.',
    action: 'Add capacity (replicas), or raise --max-num-seqs while the KV cache has room.',
    actions: {
      sglang:
        'Add capacity (replicas, or data parallelism with --dp), or raise --max-running-requests while the KV cache has room.',
    },
    zh: {
      cause: '请求排队：请求在等进入运行中的 batch，请求量超过了引擎能同时处理的量。',
      action: '扩容（加副本），或者在 KV cache 还有余量时调大 --max-num-seqs。',
      actions: {
        sglang: '扩容（加副本，或用 --dp 做数据并行），或者在 KV cache 还有余量时调大 --max-running-requests。',
      },
    },
  },
  {
    id: 'prefill_bound',
    kinds: ['latency'],
    when: [
      { signal: 'requests_waiting', op: '<', value: 1 },
      { signal: 'prompt_tokens_mean', op: '>=', value: LONG_PROMPT_TOKENS },
    ],
    cause: 'Prefill-bound: nothing is queued, but long prompts take long to process before the first token.',
    action:
      'Enable chunked prefill (--enable-chunked-prefill, tune --max-num-batched-tokens), cap --max-model-len, or cache shared prefixes (--enable-prefix-caching).',
    actions: {
      sglang:
        'Tune chunked prefill (--chunked-prefill-size), cap --context-length; the radix cache already reuses shared prefixes.',
    },
    zh: {
      cause: 'Prefill 瓶颈：没有排队，但 prompt 很长，出首 token 之前要算很久。',
      action:
        '开启分块 prefill（--enable-chunked-prefill，并调 --max-num-batched-tokens）、限制 --max-model-len，或缓存公共前缀（--enable-prefix-caching）。',
      actions: {
        sglang: '调整分块 prefill（--chunked-prefill-size）、限制 --context-length；radix cache 已经在复用公共前缀。',
      },
    },
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
    action:
      "Send more requests at once (raise the client's concurrency or the router's per-replica limit); check --max-num-seqs is not set to 1–2.",
    actions: {
      sglang:
        "Send more requests at once (raise the client's concurrency or the router's per-replica limit); check --max-running-requests is not set to 1–2.",
    },
    zh: {
      cause: '并发太低：同时只有一两个请求在跑，也没有排队，GPU 在请求之间空转。',
      action: '提高并发（调大客户端并发数，或路由层每个副本的上限）；确认 --max-num-seqs 没被设成 1–2。',
      actions: {
        sglang: '提高并发（调大客户端并发数，或路由层每个副本的上限）；确认 --max-running-requests 没被设成 1–2。',
      },
    },
  },
  {
    id: 'memory_leak',
    kinds: ['gpu_memory'],
    when: [{ trend: 'growing' }],
    cause: 'Memory leak: memory grows steadily, and not in garbage-collection waves.',
    action: 'Plan a restart of the engine before it runs out, and profile its memory to find what grows.',
    zh: {
      cause: '内存泄漏：内存在稳定上涨，不是垃圾回收那种有涨有落。',
      action: '在内存耗尽前安排重启引擎，并做内存分析，找出是什么在涨。',
    },
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
      // Against what the server was configured to take, never a fixed share (its steady state may be 95%).
      {
        signal: 'gpu_memory_used_ratio',
        op: '>=',
        value: GPU_MEMORY_OVER_SHARE_FACTOR,
        of: 'gpu_memory_configured_ratio',
      },
    ],
    cause:
      'Out of memory: requests fail while the GPU holds more memory than the server was configured to take; the engine probably hit CUDA out-of-memory (often prefilling a large batch).',
    action:
      'Leave headroom: lower --gpu-memory-utilization, --max-num-batched-tokens or --max-num-seqs; look for "CUDA out of memory" in the engine log.',
    actions: {
      sglang:
        'Leave headroom: lower --mem-fraction-static, --chunked-prefill-size or --max-running-requests; look for "out of memory" in the server log.',
    },
    zh: {
      cause:
        '显存不足（OOM）：请求失败时 GPU 占用的显存超过了服务配置的份额；引擎多半遇到了 CUDA OOM（常见于 prefill 大 batch 时）。',
      action:
        '留出余量：调低 --gpu-memory-utilization、--max-num-batched-tokens 或 --max-num-seqs；在引擎日志里搜 "CUDA out of memory"。',
      actions: {
        sglang:
          '留出余量：调低 --mem-fraction-static、--chunked-prefill-size 或 --max-running-requests；在服务日志里搜 "out of memory"。',
      },
    },
  },
  {
    id: 'context_length_exceeded',
    kinds: ['error_rate'],
    when: [{ signal: 'length_capped_ratio', op: '>=', value: LENGTH_CAPPED_RATIO }],
    cause:
      'Context length exceeded: many requests stop at the length limit (prompt plus output reach --max-model-len or max_tokens); longer prompts are rejected outright.',
    action:
      'Compare prompt lengths with --max-model-len; raise it if the KV cache has room, or have clients trim prompts and set max_tokens.',
    actions: {
      sglang:
        'Compare prompt lengths with --context-length; raise it if the KV cache has room, or have clients trim prompts and set max_tokens.',
    },
    zh: {
      cause:
        '超出上下文长度：很多请求因达到长度上限而停止（prompt 加输出达到 --max-model-len 或 max_tokens），更长的 prompt 会被直接拒绝。',
      action:
        '对比 prompt 长度和 --max-model-len；KV cache 有余量就调大它，否则让客户端精简 prompt 并设置 max_tokens。',
      actions: {
        sglang:
          '对比 prompt 长度和 --context-length；KV cache 有余量就调大它，否则让客户端精简 prompt 并设置 max_tokens。',
      },
    },
  },
  {
    id: 'input_validation',
    kinds: ['error_rate'],
    when: [
      {
        any: [
          { signal: 'http_4xx_ratio', op: '>=', value: HIGH_4XX_RATIO },
          { signal: 'rejected_ratio', op: '>=', value: HIGH_4XX_RATIO },
        ],
      },
    ],
    cause:
      'Input validation: the API server rejects requests (HTTP 4xx) before they reach the engine: malformed parameters, an unknown model name, or prompts over the context length.',
    action:
      "Read the 400 answers in the API server's log (they name the field); check the clients' model name, parameters and prompt lengths.",
    zh: {
      cause:
        '请求校验失败：API server 在请求到达引擎前就拒绝了（HTTP 4xx）：参数格式不对、模型名不存在，或 prompt 超过上下文长度。',
      action: '看 API server 日志里的 400 响应（会写明是哪个字段）；检查客户端的模型名、参数和 prompt 长度。',
    },
  },
  {
    // SGLang counts a client's abort (vLLM never does: no evidence there, so no rule fires).
    id: 'client_aborts',
    kinds: ['error_rate'],
    when: [{ signal: 'aborted_ratio', op: '>=', value: HIGH_ABORT_RATIO }],
    cause:
      'Client aborts: clients give up on requests (time-outs, cancelled streams) before they finish; usually the latency they see, not a server fault.',
    action:
      "Compare the clients' time-outs with the end-to-end latency, and look at the server's latency causes (queueing, prefill) first.",
    zh: {
      cause:
        '客户端主动中断：请求还没完成，客户端就放弃了（超时、取消流式请求）；通常是客户端感受到的延迟太高，不是服务端故障。',
      action: '对比客户端的超时设置和端到端延迟，先查服务端的延迟原因（排队、prefill）。',
    },
  },
  {
    // First: any XID on the host's GPUs in the last 5 minutes explains a dead server whatever the other targets do.
    id: 'gpu_fault',
    kinds: ['target_down'],
    when: [{ signal: 'gpu_xid_last', op: '>', value: 0 }],
    cause:
      "GPU fault: a GPU of the server's host reported an XID error (79: fallen off the bus; 48, 94, 95: ECC; 119, 120: GSP); the engine's CUDA context died with it.",
    action:
      'Drain the node: read `dmesg | grep -i xid` and `nvidia-smi -q` on the host, reset the GPU or reboot the node, then restart the server elsewhere meanwhile.',
    zh: {
      cause:
        'GPU 故障：服务所在主机的 GPU 报了 XID 错误（79：掉卡；48、94、95：ECC；119、120：GSP），引擎的 CUDA context 随之失效。',
      action:
        '先把节点 drain 掉、服务迁到别的节点；在主机上看 `dmesg | grep -i xid` 和 `nvidia-smi -q`，然后重置 GPU 或重启节点。',
    },
  },
  {
    // Every target of the job down at once points at what they share, not at one server.
    id: 'scrape_path_down',
    kinds: ['target_down'],
    when: [
      { signal: 'job_targets', op: '>=', value: 2 },
      { signal: 'job_targets_up', op: '<', value: 1 },
    ],
    cause:
      'Scrape path down: every target of the job fails its scrape at once; the network, service discovery or Prometheus itself, more likely than every server.',
    action:
      "Open Prometheus's /targets page for the scrape error; check the network to the servers, the job's service discovery and NetworkPolicies; curl one server's /metrics from Prometheus's host.",
    zh: {
      cause:
        '采集链路故障：该 job 的所有 target 同时抓取失败；更可能是网络、服务发现或 Prometheus 本身的问题，而不是所有服务一起挂了。',
      action:
        '打开 Prometheus 的 /targets 页面看抓取报错；检查到服务的网络、该 job 的服务发现和 NetworkPolicy；在 Prometheus 所在主机上 curl 一台服务的 /metrics。',
    },
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
    cause:
      'Server down: this vLLM server stopped answering scrapes while the rest of its job (if it has other targets) answers; the process exited, hangs, or its pod restarts.',
    action:
      'Check the pod or process (`kubectl describe pod`: OOMKilled, CrashLoopBackOff, evicted; `systemctl status`), its last log lines (CUDA errors, out of memory) and the node (NotReady, dmesg OOM killer).',
    zh: {
      cause:
        '服务挂了：这个 vLLM 服务不再响应抓取，而同一 job 的其他 target（如果有）正常；进程退出、卡死，或 pod 在重启。',
      action:
        '检查 pod 或进程（`kubectl describe pod`：OOMKilled、CrashLoopBackOff、Evicted；`systemctl status`）、最后几行日志（CUDA 报错、OOM）和节点状态（NotReady、dmesg 里的 OOM killer）。',
    },
  },
];
