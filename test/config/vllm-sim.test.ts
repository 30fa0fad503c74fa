/**
 * The simulated vLLM + dcgm-exporter endpoint: parseable exposition (checked by promtool),
 * metric generations, and counters that grow by elapsed time × the set rates.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { findBinary, runBinary } from '../helpers/binaries.js';
import { startVllmSim, type VllmSim } from '../helpers/vllm-sim.js';

let clockMs = 0;
let sim: VllmSim | undefined;

async function start(): Promise<VllmSim> {
  clockMs = 1_000_000;
  sim = await startVllmSim({ now: () => clockMs });
  return sim;
}

afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

/** `name{labels} value` lines → map from `name{labels}` to the value. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const cut = line.lastIndexOf(' ');
    out.set(line.slice(0, cut), Number(line.slice(cut + 1)));
  }
  return out;
}

describe('vllm-sim', () => {
  it('serves text exposition that promtool parses, with only the upstream naming lints', async () => {
    const s = await start();
    s.set('qwen3-8b', { requestsWaiting: 3, requestsPerSecond: 5 });
    s.set('quote"and\\slash', { generation: 'v0' });
    s.setGpu(0, { usedMiB: 1000 });
    clockMs += 2000;
    const response = await fetch(`${s.url}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const result = await runBinary(findBinary('promtool'), ['check', 'metrics'], { input: await response.text() });
    // Exit 3 = lint findings only; 1 would be a parse error. vLLM's `:` names and DCGM's
    // camelCase labels are what the real exporters expose, so those lints are expected.
    expect(result.code).toBe(3);
    const findings = result.stderr.trim().split('\n');
    expect(findings.filter((f) => !/should not contain ':'|should be written in 'snake_case'/.test(f))).toEqual([]);
    expect((await fetch(`${s.url}/other`)).status).toBe(404);
  });

  it('exposes the KV-cache gauge of the chosen generation, with engine="0" on V1 series', async () => {
    const s = await start();
    s.set('new', { kvCacheUsage: 0.97, requestsWaiting: 60 });
    s.set('old', { generation: 'v0', kvCacheUsage: 0.5 });
    const m = samples(s.render());
    expect(m.get('vllm:kv_cache_usage_perc{model_name="new",engine="0"}')).toBe(0.97);
    expect(m.get('vllm:gpu_cache_usage_perc{model_name="old"}')).toBe(0.5);
    expect(m.get('vllm:num_requests_waiting{model_name="new",engine="0"}')).toBe(60);
    expect([...m.keys()].filter((k) => k.includes('cache_usage'))).toHaveLength(2);
  });

  it('grows the TTFT histogram, request and preemption counters by elapsed time × rates', async () => {
    const s = await start();
    s.set('m', { requestsPerSecond: 10, errorRatio: 0.1, ttftSeconds: [0.1, 3], preemptionsPerSecond: 0.5 });
    clockMs += 10_000;
    const m = samples(s.render());
    const labels = 'model_name="m",engine="0"';
    expect(m.get('http_requests_total{handler="/v1/chat/completions",method="POST",status="2xx"}')).toBe(90);
    expect(m.get('http_requests_total{handler="/v1/chat/completions",method="POST",status="5xx"}')).toBe(10);
    expect(m.get(`vllm:time_to_first_token_seconds_count{${labels}}`)).toBe(90);
    expect(m.get(`vllm:time_to_first_token_seconds_sum{${labels}}`)).toBeCloseTo(45 * 0.1 + 45 * 3);
    expect(m.get(`vllm:time_to_first_token_seconds_bucket{${labels},le="0.1"}`)).toBe(45);
    expect(m.get(`vllm:time_to_first_token_seconds_bucket{${labels},le="2.5"}`)).toBe(45);
    expect(m.get(`vllm:time_to_first_token_seconds_bucket{${labels},le="5.0"}`)).toBe(90);
    expect(m.get(`vllm:time_to_first_token_seconds_bucket{${labels},le="+Inf"}`)).toBe(90);
    expect(m.get(`vllm:num_preemptions_total{${labels}}`)).toBe(5);

    s.set('m', { requestsPerSecond: 0 });
    clockMs += 10_000;
    expect(samples(s.render()).get(`vllm:time_to_first_token_seconds_count{${labels}}`)).toBe(90);
  });

  it('carries fractional requests between scrapes', async () => {
    const s = await start();
    s.set('m', { requestsPerSecond: 0.4 });
    const counts = [1, 2, 3, 4, 5].map(() => {
      clockMs += 1000;
      return samples(s.render()).get('vllm:time_to_first_token_seconds_count{model_name="m",engine="0"}');
    });
    expect(counts).toEqual([0, 0, 1, 1, 2]);
  });

  it('grows DCGM framebuffer memory in MiB at the set rate, capped at capacity', async () => {
    const s = await start();
    const gpuLabels = 'gpu="1",UUID="GPU-X",device="nvidia1",modelName="NVIDIA H100 80GB HBM3",Hostname="node-7"';
    s.setGpu(1, { uuid: 'GPU-X', hostname: 'node-7', usedMiB: 1000, totalMiB: 81_559, growthMiBPerHour: 3600 });
    clockMs += 60_000;
    let m = samples(s.render());
    expect(m.get(`DCGM_FI_DEV_FB_USED{${gpuLabels}}`)).toBe(1060);
    expect(m.get(`DCGM_FI_DEV_FB_FREE{${gpuLabels}}`)).toBe(81_559 - 1060);
    clockMs += 100 * 3_600_000;
    m = samples(s.render());
    expect(m.get(`DCGM_FI_DEV_FB_USED{${gpuLabels}}`)).toBe(81_559);
    expect(m.get(`DCGM_FI_DEV_FB_FREE{${gpuLabels}}`)).toBe(0);
  });
});
