/**
 * The simulated vLLM + dcgm-exporter endpoint: parseable exposition (checked by promtool),
 * metric generations, and counters that grow by elapsed time × the set rates.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { findBinary, runBinary } from '../helpers/binaries.js';
import { startVllmSim, type Generation, type GpuState, type VllmSim } from '../helpers/vllm-sim.js';
import { exposition, type ExpositionName } from '../fixtures/exposition/index.js';

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

/** Each sample line's metric name and label names in order, e.g. `vllm:x{engine,model_name}`. */
function shapes(text: string): Set<string> {
  const lines = text.split('\n').filter((l) => l !== '' && !l.startsWith('#'));
  return new Set(lines.map((l) => l.replace(/="(?:[^"\\]|\\.)*"/g, '').replace(/\s.*$/, '')));
}

/** The shapes of a fixture of real exposition, same notation. */
const fixtureShapes = (name: ExpositionName) =>
  exposition(name).map(({ name: metric, labels }) => `${metric}{${Object.keys(labels).join(',')}}`.replace('{}', ''));

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

  it('exposes the KV-cache gauge of the chosen generation, with engine="0" on V1 0.10 series only', async () => {
    const s = await start();
    s.set('new', { kvCacheUsage: 0.97, requestsWaiting: 60 });
    s.set('old', { generation: 'v0', kvCacheUsage: 0.5 });
    s.set('early', { generation: 'v1-0.8', kvCacheUsage: 0.25 });
    const m = samples(s.render());
    expect(m.get('vllm:kv_cache_usage_perc{engine="0",model_name="new"}')).toBe(0.97);
    expect(m.get('vllm:gpu_cache_usage_perc{model_name="old"}')).toBe(0.5);
    expect(m.get('vllm:gpu_cache_usage_perc{model_name="early"}')).toBe(0.25);
    expect(m.get('vllm:num_requests_waiting{engine="0",model_name="new"}')).toBe(60);
    expect([...m.keys()].filter((k) => k.includes('cache_usage'))).toHaveLength(3);
  });

  it('V0 with prefix caching off prints the hit-rate gauge as -1, vLLM\'s "disabled" sentinel', async () => {
    const s = await start();
    s.set('off', { generation: 'v0', prefixCaching: false, prefixHitRatio: 0.4 });
    s.set('on', { generation: 'v0', prefixHitRatio: 0.4 });
    const m = samples(s.render());
    expect(m.get('vllm:gpu_prefix_cache_hit_rate{model_name="off"}')).toBe(-1);
    expect(m.get('vllm:gpu_prefix_cache_hit_rate{model_name="on"}')).toBe(0.4);
  });

  describe('prints each series as the real release does (test/fixtures/exposition)', () => {
    const cases: Array<[ExpositionName, Generation, number]> = [
      ['vllm-v0-0.5', 'v0', 1],
      ['vllm-v1-0.8', 'v1-0.8', 1],
      ['vllm-v1-finished-reason', 'v1-0.8', 1],
      ['vllm-v1-0.10', 'v1', 1],
      ['vllm-v1-data-parallel', 'v1', 2],
      ['vllm-v1-http', 'v1', 1],
    ];
    it.each(cases)(
      '%s: every sample line of the fixture has its metric and label names, in order, from generation %s',
      async (fixture, generation, engines) => {
        const s = await start();
        s.set('m', { generation, engines, requestsPerSecond: 2 });
        clockMs += 5000;
        const mine = shapes(s.render());
        expect(fixtureShapes(fixture).filter((shape) => !mine.has(shape))).toEqual([]);
      },
    );

    const gpus: Array<[ExpositionName, Partial<GpuState>]> = [
      ['dcgm-gpu-util', {}],
      ['dcgm-3.x-mig-Hostname', { mig: { profile: '1g.6gb', instanceId: '3' } }],
    ];
    it.each(gpus)("%s: GPU series with dcgm-exporter's label names in its order", async (fixture, state) => {
      const s = await start();
      s.setGpu(0, state);
      expect(fixtureShapes(fixture).filter((shape) => !shapes(s.render()).has(shape))).toEqual([]);
    });

    it('dcgm-2026-hostname: lower-case hostname, pci_bus_id, and a MIG instance with pod mapping', async () => {
      const s = await start();
      s.setGpu(1, { hostLabel: 'hostname', pciBusId: '00000000:B1:00.0' });
      s.setGpu(2, {
        hostLabel: 'hostname',
        pciBusId: '00000000:CA:00.0',
        mig: { profile: '1g.6gb', instanceId: '3' },
        pod: { container: 'c', namespace: 'default', pod: 'p' },
      });
      expect(fixtureShapes('dcgm-2026-hostname').filter((shape) => !shapes(s.render()).has(shape))).toEqual([]);
    });
  });

  it('V0 and V1 before 0.8.3 expose no HTTP counters; V1 0.10 does', async () => {
    const s = await start();
    s.set('old', { generation: 'v0', errorRatio: 0.5 });
    s.set('early', { generation: 'v1-0.8', errorRatio: 0.5 });
    clockMs += 10_000;
    expect(s.render()).not.toContain('http_requests_total');
    s.set('new', {});
    clockMs += 10_000;
    expect(s.render()).toContain('http_requests_total{handler="/v1/chat/completions",method="POST",status="2xx"}');
  });

  it('never increments finished_reason="abort": V1 creates it at 0, V0 has no such series', async () => {
    const s = await start();
    s.set('new', { requestsPerSecond: 10, errorRatio: 0.2 });
    s.set('old', { generation: 'v0', requestsPerSecond: 10 });
    clockMs += 10_000;
    const m = samples(s.render());
    expect(m.get('vllm:request_success_total{engine="0",finished_reason="abort",model_name="new"}')).toBe(0);
    expect(m.get('vllm:request_success_total{engine="0",finished_reason="error",model_name="new"}')).toBe(20);
    expect(m.get('vllm:request_success_total{finished_reason="stop",model_name="old"}')).toBe(100);
    expect([...m.keys()].filter((k) => k.includes('model_name="old"') && k.includes('abort'))).toEqual([]);
  });

  it('V1 0.10 prints _created samples (creation time, epoch seconds) for counters and histograms; V0 does not', async () => {
    const s = await start();
    s.set('new', {});
    s.set('old', { generation: 'v0' });
    const m = samples(s.render());
    expect(m.get('vllm:num_preemptions_created{engine="0",model_name="new"}')).toBe(1000);
    expect(m.get('vllm:e2e_request_latency_seconds_created{engine="0",model_name="new"}')).toBe(1000);
    expect([...m.keys()].filter((k) => k.includes('_created') && k.includes('"old"'))).toEqual([]);
  });

  it('splits a data-parallel model into one series per engine, its traffic shared among them', async () => {
    const s = await start();
    s.set('dp', { engines: 2, requestsPerSecond: 10, requestsRunning: 5 });
    clockMs += 10_000;
    const m = samples(s.render());
    expect(m.get('vllm:num_requests_running{engine="0",model_name="dp"}')).toBe(3);
    expect(m.get('vllm:num_requests_running{engine="1",model_name="dp"}')).toBe(2);
    expect(m.get('vllm:e2e_request_latency_seconds_count{engine="0",model_name="dp"}')).toBe(50);
    expect(m.get('vllm:e2e_request_latency_seconds_count{engine="1",model_name="dp"}')).toBe(50);
  });

  it('V0 and V1 0.10 declare different end-to-end latency bucket sets', async () => {
    const s = await start();
    s.set('new', {});
    s.set('old', { generation: 'v0' });
    const bounds = (model: string) =>
      [...samples(s.render()).keys()]
        .filter((k) => k.startsWith('vllm:e2e_request_latency_seconds_bucket') && k.includes(`"${model}"`))
        .map((k) => /le="([^"]+)"/.exec(k)![1]);
    expect(bounds('old')).toEqual([
      '1.0',
      '2.5',
      '5.0',
      '10.0',
      '15.0',
      '20.0',
      '30.0',
      '40.0',
      '50.0',
      '60.0',
      '+Inf',
    ]);
    expect(bounds('new')).toContain('7680.0');
  });

  it('grows the TTFT histogram, request and preemption counters by elapsed time × rates', async () => {
    const s = await start();
    s.set('m', { requestsPerSecond: 10, errorRatio: 0.1, ttftSeconds: [0.1, 3], preemptionsPerSecond: 0.5 });
    clockMs += 10_000;
    const m = samples(s.render());
    const labels = 'engine="0",model_name="m"';
    expect(m.get('http_requests_total{handler="/v1/chat/completions",method="POST",status="2xx"}')).toBe(90);
    expect(m.get('http_requests_total{handler="/v1/chat/completions",method="POST",status="5xx"}')).toBe(10);
    expect(m.get(`vllm:time_to_first_token_seconds_count{${labels}}`)).toBe(90);
    expect(m.get(`vllm:time_to_first_token_seconds_sum{${labels}}`)).toBeCloseTo(45 * 0.1 + 45 * 3);
    const bucket = (le: string) => `vllm:time_to_first_token_seconds_bucket{engine="0",le="${le}",model_name="m"}`;
    expect(m.get(bucket('0.1'))).toBe(45);
    expect(m.get(bucket('2.5'))).toBe(45);
    expect(m.get(bucket('5.0'))).toBe(90);
    expect(m.get(bucket('+Inf'))).toBe(90);
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
      return samples(s.render()).get('vllm:time_to_first_token_seconds_count{engine="0",model_name="m"}');
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
