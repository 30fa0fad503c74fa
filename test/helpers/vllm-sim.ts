/**
 * A simulated vLLM OpenAI server plus NVIDIA dcgm-exporter: one loopback HTTP server whose
 * `GET /metrics` answers in the Prometheus text exposition format 0.0.4, shaped as real versions
 * print it (test/fixtures/exposition, with sources):
 * - `v0` (0.5/0.6, V0 engine): `model_name` only, `gpu_cache_usage_perc`, the prefix-cache hit-rate
 *   gauge, `request_success_total` series only once a reason occurred (no `abort`), no `_created`
 *   samples, no HTTP counters (they came with 0.8.3, and never under V0);
 * - `v1-0.8` (0.8.0/0.8.1, V1 engine): no `engine` label yet, still `gpu_cache_usage_perc`,
 *   `gpu_prefix_cache_*` counters, `stop`/`length`/`abort` created at 0, no HTTP counters;
 * - `v1` (0.10, V1 engine): `engine` on every series (one per data-parallel engine),
 *   `kv_cache_usage_perc`, both prefix-cache counter names, `error` among the finish reasons,
 *   `_created` samples, and HTTP counters (`http_requests_total`, no `model_name`).
 * `finished_reason="abort"` is never incremented, as in every vLLM version. Gauges are whatever was
 * last set; counters and histograms grow on each scrape by (seconds since the previous scrape) × the
 * set rates. GPUs: `dcgm-sim.ts`.
 *
 * @see https://prometheus.io/docs/instrumenting/exposition_formats/#text-based-format
 * @see https://docs.vllm.ai/en/latest/design/metrics.html
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DCGM_FAMILIES, defaultGpu, gpuLabels, type GpuState } from './dcgm-sim.js';

export type { GpuState } from './dcgm-sim.js';

/** vLLM TTFT histogram bucket bounds in seconds, as vLLM V1 declares them (V0 stops at 10 s). */
export const TTFT_BUCKETS_SECONDS = [
  0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0,
  640.0, 2560.0,
] as const;

/** End-to-end latency bucket bounds, seconds, per generation: the sets differ, so their sums distort quantiles. */
export const E2E_BUCKETS_SECONDS = {
  v0: [1.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0],
  'v1-0.8': [0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0],
  v1: [
    0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0,
    1920.0, 7680.0,
  ],
} as const;

/** Which vLLM release's exposition a model is served with (see the file header). */
export type Generation = keyof typeof E2E_BUCKETS_SECONDS;

/** Settable state of one served model (`model_name` label). */
export interface ModelState {
  generation: Generation;
  /** Data-parallel engines (V1 0.10 only: one series per `engine`); traffic and gauges are split among them. */
  engines: number;
  /** `vllm:num_requests_waiting`, a count (summed over engines). */
  requestsWaiting: number;
  /** `vllm:num_requests_running`, a count (summed over engines). */
  requestsRunning: number;
  /** KV-cache usage, ratio 0–1 (each engine). */
  kvCacheUsage: number;
  /** Growth of `vllm:num_preemptions_total`, per second. */
  preemptionsPerSecond: number;
  /** Requests completed per second. */
  requestsPerSecond: number;
  /** TTFT of successive successful requests in seconds, cycled: `[0.2]` = all 200 ms; `[0.1, 3]` = half 3 s. */
  ttftSeconds: readonly number[];
  /** Decode time of each successful request, seconds: its end-to-end latency is TTFT + this. */
  decodeSeconds: number;
  /** Share 0–1 of requests that fail (5xx where HTTP counters exist, `finished_reason="error"` on `v1`; no TTFT). */
  errorRatio: number;
  /** Prompt tokens per request (`prompt_tokens_total`, prefix-cache queries). */
  promptTokens: number;
  /** Share 0–1 of prompt tokens found in the prefix cache. */
  prefixHitRatio: number;
  /**
   * Whether prefix caching is on. Off is V0's default, and V0 then prints its hit-rate gauge as -1,
   * vLLM's "not supported or disabled" (vllm/core/interfaces.py, `get_prefix_cache_hit_rate`).
   * V1 turns it on by default; only `v0` reads this. Default here: on.
   */
  prefixCaching: boolean;
}

export interface VllmSim {
  /** Base URL, `http://127.0.0.1:<port>`; metrics are at `${url}/metrics`. */
  url: string;
  port: number;
  /** Creates the model on first use (defaults below), then merges `state` into it. */
  set(model: string, state: Partial<ModelState>): void;
  /** Creates GPU `gpu` on first use, then merges `state`; `usedMiB` continues from its current value unless given. */
  setGpu(gpu: number, state: Partial<GpuState>): void;
  /** The exposition text a scrape would return now (advances the counters like a scrape). */
  render(): string;
  close(): Promise<void>;
}

export interface VllmSimOptions {
  /** Clock in milliseconds, for deterministic tests. Default `Date.now`. */
  now?: () => number;
}

const DEFAULT_MODEL: ModelState = {
  generation: 'v1',
  engines: 1,
  requestsWaiting: 0,
  requestsRunning: 0,
  kvCacheUsage: 0,
  preemptionsPerSecond: 0,
  requestsPerSecond: 1,
  ttftSeconds: [0.2],
  decodeSeconds: 2,
  errorRatio: 0,
  promptTokens: 100,
  prefixHitRatio: 0,
  prefixCaching: true,
};

/** Counters of one engine; requests and errors carry fractions between scrapes. */
interface EngineCounters {
  preemptions: number;
  ok: number;
  errors: number;
  requestCarry: number;
  errorCarry: number;
  preemptionCarry: number;
  cursor: number;
  ttft: Histogram;
  e2e: Histogram;
  http: Histogram;
  prompt: Histogram;
  queue: Histogram;
  prefill: Histogram;
  decode: Histogram;
}
interface Histogram {
  buckets: number[];
  sum: number;
  count: number;
}
interface Model {
  state: ModelState;
  engines: EngineCounters[];
  created: number;
}

type Labels = Record<string, string>;
type Sample = [labels: Labels, value: number, suffix?: string];
type Family = [name: string, type: 'gauge' | 'counter' | 'histogram', help: string, samples: Sample[]];

const escapeLabel = (v: string) => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
/** Python's prometheus_client writes floats like `1.0`, and vLLM's `le` values and samples follow. */
const pyFloat = (b: number) => (Number.isInteger(b) ? b.toFixed(1) : String(b));

/**
 * @param sorted label names in alphabetical order, as vLLM prints them (its multiprocess collector
 *   sorts them: `{engine="1",le="7680.0",model_name=…}`); dcgm-exporter keeps its own order
 */
function family([name, type, help, samples]: Family, sorted = true): string {
  const lines = [`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`];
  for (const [labels, value, suffix = ''] of samples) {
    const entries = Object.entries(labels);
    if (sorted) entries.sort(([a], [b]) => (a < b ? -1 : 1));
    const body = entries.map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(',');
    lines.push(`${name}${suffix}{${body}} ${pyFloat(value)}`);
  }
  return lines.join('\n');
}

const ttftBounds = (g: Generation) => (g === 'v0' ? TTFT_BUCKETS_SECONDS.filter((b) => b <= 10) : TTFT_BUCKETS_SECONDS);
const histogram = (bounds: readonly number[]): Histogram => ({ buckets: bounds.map(() => 0), sum: 0, count: 0 });
const newEngine = (g: Generation): EngineCounters => ({
  preemptions: 0,
  ok: 0,
  errors: 0,
  requestCarry: 0,
  errorCarry: 0,
  preemptionCarry: 0,
  cursor: 0,
  ttft: histogram(ttftBounds(g)),
  e2e: histogram(E2E_BUCKETS_SECONDS[g]),
  http: histogram(HTTP_BUCKETS),
  prompt: histogram(PROMPT_BUCKETS),
  queue: histogram(E2E_BUCKETS_SECONDS[g]),
  prefill: histogram(E2E_BUCKETS_SECONDS[g]),
  decode: histogram(E2E_BUCKETS_SECONDS[g]),
});

/** prometheus-fastapi-instrumentator's default `http_request_duration_seconds` buckets. */
const HTTP_BUCKETS = [0.1, 0.5, 1] as const;

/** Prompt-length bucket bounds (tokens): vLLM's 1-2-5 series up to the model's length (here 8,192). */
const PROMPT_BUCKETS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000] as const;

function put(h: Histogram, bounds: readonly number[], seconds: number, k: number): void {
  bounds.forEach((bound, b) => {
    if (seconds <= bound) h.buckets[b]! += k;
  });
  h.sum += seconds * k;
  h.count += k;
}

/** Adds `n` successful requests, cycling through the TTFT samples from `c.cursor`, in O(samples × buckets). */
function observe(state: ModelState, c: EngineCounters, n: number): void {
  const samples = state.ttftSeconds;
  const len = samples.length;
  if (len === 0 || n === 0) return;
  samples.forEach((seconds, j) => {
    const k = Math.floor(n / len) + ((j - c.cursor + len) % len < n % len ? 1 : 0);
    const latency = E2E_BUCKETS_SECONDS[state.generation];
    put(c.ttft, ttftBounds(state.generation), seconds, k);
    put(c.e2e, latency, seconds + state.decodeSeconds, k);
    put(c.http, HTTP_BUCKETS, seconds + state.decodeSeconds, k);
    put(c.prompt, PROMPT_BUCKETS, state.promptTokens, k);
    put(c.queue, latency, 0, k);
    put(c.prefill, latency, seconds, k);
    put(c.decode, latency, state.decodeSeconds, k);
  });
  c.cursor = (c.cursor + n) % len;
}

/** Advances one engine by `seconds` at its share of the model's rates. */
function advance(state: ModelState, c: EngineCounters, seconds: number, share: number): void {
  // The epsilon keeps 0.4 + 0.4 + 0.2 from flooring to 0 through float error.
  const whole = (carry: number) => Math.floor(carry + 1e-9);
  c.preemptionCarry += state.preemptionsPerSecond * share * seconds;
  c.preemptions += whole(c.preemptionCarry);
  c.preemptionCarry -= whole(c.preemptionCarry);
  c.requestCarry += state.requestsPerSecond * share * seconds;
  const requests = whole(c.requestCarry);
  c.requestCarry -= requests;
  c.errorCarry += requests * state.errorRatio;
  const errors = Math.min(requests, whole(c.errorCarry));
  c.errorCarry -= errors;
  c.errors += errors;
  c.ok += requests - errors;
  observe(state, c, requests - errors);
}

/** One model's series, engine by engine, as its generation prints them. */
function modelFamilies(name: string, m: Model): Family[] {
  const { state, engines } = m;
  const g = state.generation;
  const labelsOf = (k: number): Labels => (g === 'v1' ? { engine: String(k), model_name: name } : { model_name: name });
  const split = (total: number, k: number) => Math.floor(total / engines.length) + (k < total % engines.length ? 1 : 0);
  const per = (pick: (c: EngineCounters, k: number) => number, suffix?: string): Sample[] =>
    engines.map((c, k) => [labelsOf(k), pick(c, k), suffix]);
  const hist = (pick: (c: EngineCounters) => Histogram, bounds: readonly number[]): Sample[] =>
    engines.flatMap((c, k): Sample[] => [
      ...bounds.map((b, i): Sample => [{ ...labelsOf(k), le: pyFloat(b) }, pick(c).buckets[i]!, '_bucket']),
      [{ ...labelsOf(k), le: '+Inf' }, pick(c).count, '_bucket'],
      [labelsOf(k), pick(c).count, '_count'],
      [labelsOf(k), pick(c).sum, '_sum'],
    ]);
  const tokens = (c: EngineCounters) => (c.ok + c.errors) * state.promptTokens;
  const reasons: Array<[string, (c: EngineCounters) => number]> =
    g === 'v0'
      ? [['stop', (c) => c.ok]]
      : [
          ['stop', (c) => c.ok],
          ['length', () => 0],
          ['abort', () => 0],
          ...(g === 'v1'
            ? [['error', (c: EngineCounters) => c.errors] as [string, (c: EngineCounters) => number]]
            : []),
        ];
  const success = engines.flatMap((c, k): Sample[] =>
    reasons
      .filter(([, v]) => g !== 'v0' || v(c) > 0)
      .map(([reason, v]): Sample => [{ finished_reason: reason, ...labelsOf(k) }, v(c)]),
  );
  const kvName = g === 'v1' ? 'vllm:kv_cache_usage_perc' : 'vllm:gpu_cache_usage_perc';
  const prefix: Family[] =
    g === 'v0'
      ? [
          [
            'vllm:gpu_prefix_cache_hit_rate',
            'gauge',
            'GPU prefix cache block hit rate.',
            per(() => (state.prefixCaching ? state.prefixHitRatio : -1)),
          ],
        ]
      : (g === 'v1' ? ['vllm:prefix_cache', 'vllm:gpu_prefix_cache'] : ['vllm:gpu_prefix_cache']).flatMap(
          (base): Family[] => [
            [
              `${base}_queries_total`,
              'counter',
              'Prefix cache queries, in terms of number of queried tokens.',
              per(tokens),
            ],
            [
              `${base}_hits_total`,
              'counter',
              'Prefix cache hits, in terms of number of cached tokens.',
              per((c) => Math.floor(tokens(c) * state.prefixHitRatio)),
            ],
          ],
        );
  return [
    [
      'vllm:num_requests_running',
      'gauge',
      'Number of requests in model execution batches.',
      per((_, k) => split(state.requestsRunning, k)),
    ],
    [
      'vllm:num_requests_waiting',
      'gauge',
      'Number of requests waiting to be processed.',
      per((_, k) => split(state.requestsWaiting, k)),
    ],
    [kvName, 'gauge', 'KV-cache usage. 1 means 100 percent usage.', per(() => state.kvCacheUsage)],
    [
      'vllm:num_preemptions_total',
      'counter',
      'Cumulative number of preemption from the engine.',
      per((c) => c.preemptions),
    ],
    ['vllm:prompt_tokens_total', 'counter', 'Number of prefill tokens processed.', per(tokens)],
    ['vllm:request_success_total', 'counter', 'Count of successfully processed requests.', success],
    [
      'vllm:time_to_first_token_seconds',
      'histogram',
      'Histogram of time to first token in seconds.',
      hist((c) => c.ttft, ttftBounds(g)),
    ],
    [
      'vllm:e2e_request_latency_seconds',
      'histogram',
      'Histogram of e2e request latency in seconds.',
      hist((c) => c.e2e, E2E_BUCKETS_SECONDS[g]),
    ],
    [
      'vllm:request_prompt_tokens',
      'histogram',
      'Number of prefill tokens processed.',
      hist((c) => c.prompt, PROMPT_BUCKETS),
    ],
    ...prefix,
    // Request phase histograms came with V1 (0.8); V0 0.5 has none.
    ...(g === 'v0'
      ? []
      : ([
          [
            'vllm:request_queue_time_seconds',
            'histogram',
            'Histogram of time spent in WAITING phase for request.',
            hist((c) => c.queue, E2E_BUCKETS_SECONDS[g]),
          ],
          [
            'vllm:request_prefill_time_seconds',
            'histogram',
            'Histogram of time spent in PREFILL phase for request.',
            hist((c) => c.prefill, E2E_BUCKETS_SECONDS[g]),
          ],
          [
            'vllm:request_decode_time_seconds',
            'histogram',
            'Histogram of time spent in DECODE phase for request.',
            hist((c) => c.decode, E2E_BUCKETS_SECONDS[g]),
          ],
        ] satisfies Family[])),
  ];
}

/**
 * `_created` samples as prometheus_client prints them in text format 0.0.4: a gauge family per counter
 * or histogram (`foo_total` → `foo_created`), valued at the creation time in epoch seconds. V0
 * disables them (`disable_created_metrics()`).
 */
function createdFamilies(families: readonly Family[], models: ReadonlyMap<string, Model>): Family[] {
  return families
    .filter(([, type]) => type !== 'gauge')
    .map(([name, , help, samples]): Family => {
      const created = samples.filter(
        ([labels, , suffix]) => (suffix === undefined || suffix === '_count') && labels.engine !== undefined,
      );
      const base = name.replace(/_total$/, '');
      return [
        `${base}_created`,
        'gauge',
        help,
        created.map(([labels]) => [labels, models.get(labels.model_name ?? '')?.created ?? 0]),
      ];
    })
    .filter(([, , , samples]) => samples.length > 0);
}

/** All models' families merged by name (a family is announced once, even when empty). */
function renderModels(models: Map<string, Model>): string[] {
  const byName = new Map<string, Family>();
  for (const [name, m] of models) {
    for (const f of modelFamilies(name, m)) {
      const seen = byName.get(f[0]);
      byName.set(f[0], seen ? [seen[0], seen[1], seen[2], [...seen[3], ...f[3]]] : f);
    }
  }
  const families = [...byName.values()];
  const http = [...models.values()].filter((m) => m.state.generation === 'v1');
  const count = (pick: (c: EngineCounters) => number) =>
    http.reduce((t, m) => t + m.engines.reduce((s, c) => s + pick(c), 0), 0);
  const route = { handler: '/v1/chat/completions', method: 'POST' };
  const sumOf = (pick: (h: Histogram) => number) => count((c) => pick(c.http));
  const httpFamily: Family[] = http.length
    ? [
        [
          'http_requests_total',
          'counter',
          'Total number of requests by method, status and handler.',
          [
            [{ ...route, status: '2xx' }, count((c) => c.ok)],
            [{ ...route, status: '5xx' }, count((c) => c.errors)],
          ],
        ],
        [
          'http_request_duration_seconds',
          'histogram',
          'Latency with only few buckets by handler.',
          [
            ...HTTP_BUCKETS.map(
              (b, i): Sample => [{ ...route, le: pyFloat(b) }, sumOf((h) => h.buckets[i]!), '_bucket'],
            ),
            [{ ...route, le: '+Inf' }, sumOf((h) => h.count), '_bucket'],
            [route, sumOf((h) => h.count), '_count'],
            [route, sumOf((h) => h.sum), '_sum'],
          ],
        ],
      ]
    : [];
  return [...families, ...createdFamilies(families, models), ...httpFamily].map((f) => family(f));
}

function renderGpus(gpus: Map<number, GpuState>): string[] {
  return DCGM_FAMILIES.map(([name, help, pick]) =>
    family([name, 'gauge', help, [...gpus.entries()].map(([i, g]): Sample => [gpuLabels(i, g), pick(g)])], false),
  );
}

/**
 * Starts the simulator on 127.0.0.1 with an OS-chosen port. It serves no model and no GPU
 * until `set`/`setGpu` are called; a GPU family is still announced by its HELP/TYPE lines.
 *
 * @returns the handle; `close()` stops the server
 */
export async function startVllmSim(options: VllmSimOptions = {}): Promise<VllmSim> {
  const now = options.now ?? Date.now;
  const models = new Map<string, Model>();
  const gpus = new Map<number, GpuState>();
  let last = now();

  const tick = () => {
    const t = now();
    const seconds = Math.max(0, (t - last) / 1000);
    last = t;
    for (const { state, engines } of models.values())
      for (const c of engines) advance(state, c, seconds, 1 / engines.length);
    for (const g of gpus.values())
      g.usedMiB = Math.min(g.totalMiB, Math.max(0, g.usedMiB + (g.growthMiBPerHour * seconds) / 3600));
  };
  const render = () => {
    tick();
    return `${[...renderModels(models), ...renderGpus(gpus)].join('\n')}\n`;
  };

  const server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' }).end(render());
  });
  await new Promise<void>((ok, fail) => server.once('error', fail).listen(0, '127.0.0.1', ok));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    set(model, state) {
      tick();
      const entry = models.get(model) ?? { state: { ...DEFAULT_MODEL }, engines: [], created: now() / 1000 };
      const restarted = state.generation !== undefined && state.generation !== entry.state.generation;
      Object.assign(entry.state, state);
      // Only V1 0.10 runs data-parallel engines as separate series; a generation change restarts the counters.
      const wanted = entry.state.generation === 'v1' ? Math.max(1, Math.floor(entry.state.engines)) : 1;
      if (entry.engines.length !== wanted || restarted)
        entry.engines = Array.from({ length: wanted }, () => newEngine(entry.state.generation));
      models.set(model, entry);
    },
    setGpu(gpu, state) {
      tick();
      gpus.set(gpu, { ...(gpus.get(gpu) ?? defaultGpu(gpu)), ...state });
    },
    render,
    close: () =>
      new Promise<void>((ok, fail) => {
        server.closeAllConnections();
        server.close((error) => (error ? fail(error) : ok()));
      }),
  };
}
