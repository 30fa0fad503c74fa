/**
 * A simulated vLLM OpenAI server plus NVIDIA dcgm-exporter: one loopback HTTP server whose
 * `GET /metrics` answers in the Prometheus text exposition format 0.0.4 with the series the
 * shipped rules and the enrichers read. Gauges are whatever was last set; counters and the
 * TTFT histogram grow on each scrape by (seconds since the previous scrape) × the set rates.
 *
 * @see https://prometheus.io/docs/instrumenting/exposition_formats/#text-based-format
 * @see https://docs.vllm.ai/en/latest/design/metrics.html
 * @see https://github.com/NVIDIA/dcgm-exporter (default counters: DCGM_FI_DEV_FB_USED/FREE, MiB)
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** vLLM TTFT histogram bucket bounds in seconds, as vLLM V1 declares them. */
export const TTFT_BUCKETS_SECONDS = [
  0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0,
  160.0, 640.0, 2560.0,
] as const;

/** Settable state of one served model (`model_name` label). */
export interface ModelState {
  /**
   * Which KV-cache gauge to expose: `v0` → `vllm:gpu_cache_usage_perc{model_name}`,
   * `v1` → `vllm:kv_cache_usage_perc{model_name,engine="0"}` (V1 also puts `engine` on every vllm:* series).
   */
  generation: 'v0' | 'v1';
  /** `vllm:num_requests_waiting`, a count. */
  requestsWaiting: number;
  /** `vllm:num_requests_running`, a count. */
  requestsRunning: number;
  /** KV-cache usage, ratio 0–1. */
  kvCacheUsage: number;
  /** Growth of `vllm:num_preemptions_total`, per second. */
  preemptionsPerSecond: number;
  /** Requests completed per second (both `http_requests_total` statuses together). */
  requestsPerSecond: number;
  /** TTFT of successive successful requests in seconds, cycled: `[0.2]` = all 200 ms; `[0.1, 3]` = half 3 s. */
  ttftSeconds: readonly number[];
  /** Share 0–1 of requests answered 5xx (they produce no TTFT observation). */
  errorRatio: number;
}

/** Settable state of one GPU (`gpu` label), DCGM units (MiB). */
export interface GpuState {
  hostname: string;
  uuid: string;
  /** DCGM's `modelName` label, the GPU product name. */
  modelName: string;
  /** Framebuffer capacity, MiB; `DCGM_FI_DEV_FB_FREE` = total − used. */
  totalMiB: number;
  /** Framebuffer used now, MiB (capped at `totalMiB` as it grows). */
  usedMiB: number;
  /** Growth of `usedMiB` in MiB per hour of the sim's clock (negative shrinks it, floored at 0). */
  growthMiBPerHour: number;
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
  generation: 'v1', requestsWaiting: 0, requestsRunning: 0, kvCacheUsage: 0, preemptionsPerSecond: 0,
  requestsPerSecond: 1, ttftSeconds: [0.2], errorRatio: 0,
};

const defaultGpu = (gpu: number): GpuState => ({
  hostname: 'gpu-node-1', uuid: `GPU-${String(gpu).padStart(8, '0')}-0000-0000-0000-000000000000`,
  modelName: 'NVIDIA H100 80GB HBM3', totalMiB: 81_559, usedMiB: 0, growthMiBPerHour: 0,
});

/** Counters of one model; requests and errors carry fractions between scrapes. */
interface ModelCounters {
  preemptions: number; ok: number; errors: number; requestCarry: number; errorCarry: number;
  cursor: number; buckets: number[]; sum: number; count: number;
}

type Labels = Record<string, string>;
type Sample = [labels: Labels, value: number, suffix?: string];

const escapeLabel = (v: string) => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
/** Python's prometheus_client writes float bounds like `1.0`, and vLLM's `le` values follow. */
const formatBound = (b: number) => (Number.isInteger(b) ? b.toFixed(1) : String(b));

function family(name: string, type: 'gauge' | 'counter' | 'histogram', help: string, samples: Sample[]): string {
  const lines = [`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`];
  for (const [labels, value, suffix = ''] of samples) {
    const body = Object.entries(labels).map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(',');
    lines.push(`${name}${suffix}{${body}} ${value}`);
  }
  return lines.join('\n');
}

/** Adds `n` requests' TTFTs, cycling through `samples` from `counters.cursor`, in O(samples × buckets). */
function observe(counters: ModelCounters, samples: readonly number[], n: number): void {
  const len = samples.length;
  if (len === 0 || n === 0) return;
  samples.forEach((seconds, j) => {
    const k = Math.floor(n / len) + ((j - counters.cursor + len) % len < n % len ? 1 : 0);
    TTFT_BUCKETS_SECONDS.forEach((bound, b) => {
      if (seconds <= bound) counters.buckets[b]! += k;
    });
    counters.sum += seconds * k;
    counters.count += k;
  });
  counters.cursor = (counters.cursor + n) % len;
}

function advance(state: ModelState, counters: ModelCounters, seconds: number): void {
  counters.preemptions += state.preemptionsPerSecond * seconds;
  counters.requestCarry += state.requestsPerSecond * seconds;
  // The epsilon keeps 0.4 + 0.4 + 0.2 from flooring to 0 through float error.
  const requests = Math.floor(counters.requestCarry + 1e-9);
  counters.requestCarry -= requests;
  counters.errorCarry += requests * state.errorRatio;
  const errors = Math.min(requests, Math.floor(counters.errorCarry + 1e-9));
  counters.errorCarry -= errors;
  counters.errors += errors;
  counters.ok += requests - errors;
  observe(counters, state.ttftSeconds, requests - errors);
}

function renderModels(models: Map<string, { state: ModelState; counters: ModelCounters }>): string[] {
  const entries = [...models.entries()];
  const labelsOf = (name: string, s: ModelState): Labels => (s.generation === 'v1' ? { model_name: name, engine: '0' } : { model_name: name });
  const gauge = (pick: (s: ModelState) => number): Sample[] => entries.map(([n, m]) => [labelsOf(n, m.state), pick(m.state)]);
  const kv = (gen: ModelState['generation']): Sample[] =>
    entries.filter(([, m]) => m.state.generation === gen).map(([n, m]) => [labelsOf(n, m.state), m.state.kvCacheUsage]);
  const histogram = entries.flatMap(([n, { state, counters }]): Sample[] => [
    ...TTFT_BUCKETS_SECONDS.map((bound, b): Sample => [{ ...labelsOf(n, state), le: formatBound(bound) }, counters.buckets[b]!, '_bucket']),
    [{ ...labelsOf(n, state), le: '+Inf' }, counters.count, '_bucket'],
    [labelsOf(n, state), counters.count, '_count'],
    [labelsOf(n, state), counters.sum, '_sum'],
  ]);
  const http = (status: string, pick: (c: ModelCounters) => number): Sample => [
    { handler: '/v1/chat/completions', method: 'POST', status },
    entries.reduce((total, [, m]) => total + pick(m.counters), 0),
  ];
  return [
    family('vllm:num_requests_waiting', 'gauge', 'Number of requests waiting to be processed.', gauge((s) => s.requestsWaiting)),
    family('vllm:num_requests_running', 'gauge', 'Number of requests in model execution batches.', gauge((s) => s.requestsRunning)),
    family('vllm:gpu_cache_usage_perc', 'gauge', 'GPU KV-cache usage. 1 means 100 percent usage.', kv('v0')),
    family('vllm:kv_cache_usage_perc', 'gauge', 'KV-cache usage. 1 means 100 percent usage.', kv('v1')),
    family('vllm:num_preemptions_total', 'counter', 'Cumulative number of preemption from the engine.',
      entries.map(([n, m]) => [labelsOf(n, m.state), m.counters.preemptions])),
    family('vllm:time_to_first_token_seconds', 'histogram', 'Histogram of time to first token in seconds.', histogram),
    family('http_requests_total', 'counter', 'Total number of requests by method, status and handler.',
      [http('2xx', (c) => c.ok), http('5xx', (c) => c.errors)]),
  ];
}

function renderGpus(gpus: Map<number, GpuState>): string[] {
  const labelsOf = (gpu: number, g: GpuState): Labels => ({
    gpu: String(gpu), UUID: g.uuid, device: `nvidia${gpu}`, modelName: g.modelName, Hostname: g.hostname,
  });
  const samples = (pick: (g: GpuState) => number): Sample[] => [...gpus.entries()].map(([i, g]) => [labelsOf(i, g), pick(g)]);
  return [
    family('DCGM_FI_DEV_FB_FREE', 'gauge', 'Framebuffer memory free (in MiB).', samples((g) => g.totalMiB - g.usedMiB)),
    family('DCGM_FI_DEV_FB_USED', 'gauge', 'Framebuffer memory used (in MiB).', samples((g) => g.usedMiB)),
  ];
}

/**
 * Starts the simulator on 127.0.0.1 with an OS-chosen port. It serves no model and no GPU
 * until `set`/`setGpu` are called; an empty family is still announced by its HELP/TYPE lines.
 *
 * @returns the handle; `close()` stops the server
 */
export async function startVllmSim(options: VllmSimOptions = {}): Promise<VllmSim> {
  const now = options.now ?? Date.now;
  const models = new Map<string, { state: ModelState; counters: ModelCounters }>();
  const gpus = new Map<number, GpuState>();
  let last = now();

  const tick = () => {
    const t = now();
    const seconds = Math.max(0, (t - last) / 1000);
    last = t;
    for (const { state, counters } of models.values()) advance(state, counters, seconds);
    for (const g of gpus.values()) g.usedMiB = Math.min(g.totalMiB, Math.max(0, g.usedMiB + (g.growthMiBPerHour * seconds) / 3600));
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
      const entry = models.get(model) ?? {
        state: { ...DEFAULT_MODEL },
        counters: { preemptions: 0, ok: 0, errors: 0, requestCarry: 0, errorCarry: 0, cursor: 0, buckets: TTFT_BUCKETS_SECONDS.map(() => 0), sum: 0, count: 0 },
      };
      Object.assign(entry.state, state);
      models.set(model, entry);
    },
    setGpu(gpu, state) {
      tick();
      gpus.set(gpu, { ...(gpus.get(gpu) ?? defaultGpu(gpu)), ...state });
    },
    render,
    close: () => new Promise<void>((ok, fail) => {
      server.closeAllConnections();
      server.close((error) => (error ? fail(error) : ok()));
    }),
  };
}
