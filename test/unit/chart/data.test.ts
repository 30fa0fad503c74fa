import { describe, expect, it } from 'vitest';
import { alertSeries, chartData, chartWindow, MAX_SPAN_SECONDS, MIN_STEP_SECONDS } from '../../../shared/chart/data.js';
import type { ChartSpec } from '../../../shared/chart/spec.js';
import type { Point } from '../../../shared/prometheus/client.js';

const FIRED = 1_795_000_000;
const spec: ChartSpec = {
  query: 'vllm:gpu_cache_usage_perc',
  labels: { alertname: 'KV', model_name: 'm', instance: 'a:1' },
  title: 'KV · rule expression',
  unit: 'none',
  firedAt: FIRED,
  threshold: { op: '>', value: 0.95 },
};

const series = (from: number, to: number, step: number, value: (t: number) => number): Point[] => {
  const points: Point[] = [];
  for (let t = from; t <= to; t += step) points.push({ time: t, value: value(t) });
  return points;
};

describe('chartWindow', () => {
  it('starts a third of the time since firing before it (15 min to 6 h), ends now, ≤ 300 points of ≥ 15 s', () => {
    expect(chartWindow(spec, FIRED + 600)).toEqual({ start: FIRED - 900, end: FIRED + 600, step: MIN_STEP_SECONDS });
    expect(chartWindow(spec, FIRED + 3 * 3600)).toEqual({ start: FIRED - 3600, end: FIRED + 3 * 3600, step: 48 });
    const late = chartWindow(spec, FIRED + 30 * 24 * 3600);
    expect(late.end - late.start).toBe(MAX_SPAN_SECONDS);
    expect((late.end - late.start) / late.step).toBeLessThanOrEqual(300);
  });

  it('keeps a window of at least 15 min ending now when startsAt is in the future (clock skew)', () => {
    for (const ahead of [16 * 60, 3600, 30 * 24 * 3600]) {
      const w = chartWindow(spec, FIRED - ahead);
      expect(w.end).toBe(FIRED - ahead);
      expect(w.end - w.start).toBeGreaterThanOrEqual(15 * 60);
      expect(w.step).toBeGreaterThanOrEqual(MIN_STEP_SECONDS);
    }
  });

  it("spans a whole number of steps, so the range query's last point is now, not up to a step before it", () => {
    // A range query evaluates at start, start + step, … ≤ end: an unaligned start left "now" a step stale
    // (a 2-day-old alert, step 760 s: the chart read "now: no data" while Prometheus had 40 s of data).
    for (const since of [601, 3 * 3600 + 7, 2 * 24 * 3600 + 1234, 5 * 24 * 3600 + 99, 30 * 24 * 3600 + 5]) {
      for (const memory of [undefined, { windowSeconds: 6 * 3600 + 13, capacityMiB: 80_000 }]) {
        const s = { ...spec, firedAt: FIRED + 0.4, ...(memory && { memory }) };
        const w = chartWindow(s, FIRED + since + 0.7);
        expect((w.end - w.start) % w.step).toBe(0);
        expect(w.end - w.start).toBeLessThanOrEqual(MAX_SPAN_SECONDS);
        if (since < 6 * 24 * 3600) expect(w.start).toBeLessThanOrEqual(Math.floor(s.firedAt) - 15 * 60);
        if (memory) expect(w.start).toBeLessThanOrEqual(w.end - memory.windowSeconds);
      }
    }
  });

  it("covers a memory trend's whole fitted window", () => {
    const w = chartWindow({ ...spec, memory: { windowSeconds: 6 * 3600, capacityMiB: 80_000 } }, FIRED + 600);
    expect(w.start).toBe(FIRED + 600 - 6 * 3600);
  });
});

describe('chartData', () => {
  const w = chartWindow(spec, FIRED + 1800);

  it("takes the alert's series, the value when fired and the latest", () => {
    const mine = series(w.start, w.end, w.step, (t) => (t < FIRED ? 0.9 : 0.97));
    const other = { metric: { model_name: 'm', instance: 'b:1' }, points: series(w.start, w.end, w.step, () => 0.1) };
    const d = chartData(
      spec,
      [other, { metric: { __name__: 'vllm:gpu_cache_usage_perc', model_name: 'm', instance: 'a:1' }, points: mine }],
      w,
    );
    expect(d.points).toBe(mine);
    expect(d.fired).toEqual({ time: FIRED, value: 0.97 });
    expect(d.latest).toEqual(mine.at(-1));
    expect(d).toMatchObject({
      xMin: w.start,
      xMax: w.end,
      now: w.end,
      firedAt: FIRED,
      threshold: { op: '>', value: 0.95 },
    });
  });

  it('draws nothing, never zero, when no series belongs to the alert', () => {
    const d = chartData(spec, [{ metric: { instance: 'b:1' }, points: [{ time: FIRED, value: 0 }] }], w);
    expect(d.points).toEqual([]);
    expect(d.fired).toBeUndefined();
    expect(d.latest).toBeUndefined();
    expect(alertSeries([], spec.labels)).toBeUndefined();
  });

  it('ignores labels the query adds that the alert lacks (engine_generation, DCGM device labels)', () => {
    const mine = {
      metric: { model_name: 'm', instance: 'a:1', engine_generation: 'v0' },
      points: [{ time: FIRED, value: 0.97 }],
    };
    const other = {
      metric: { model_name: 'n', instance: 'a:1', engine_generation: 'v0' },
      points: [{ time: FIRED, value: 0.1 }],
    };
    expect(alertSeries([other, mine], spec.labels)).toBe(mine);
    const gpu = {
      metric: { Hostname: 'node-1', gpu: '0', UUID: 'GPU-1', DCGM_FI_DRIVER_VERSION: '550', modelName: 'H100' },
      points: [],
    };
    const gpu1 = { ...gpu, metric: { ...gpu.metric, gpu: '1', UUID: 'GPU-2' } };
    expect(alertSeries([gpu1, gpu], { alertname: 'GpuMem', Hostname: 'node-1', gpu: '0' })).toBe(gpu);
  });

  it('takes no series when several fit and none shares a label with the alert', () => {
    const a = { metric: { engine_generation: 'v0' }, points: [] };
    const b = { metric: { engine_generation: 'v1' }, points: [] };
    expect(alertSeries([a, b], spec.labels)).toBeUndefined();
    expect(alertSeries([a], spec.labels)).toBe(a);
  });

  it('skips NaN for the fired and latest values', () => {
    const points = [
      { time: FIRED, value: Number.NaN },
      { time: FIRED + 15, value: 0.96 },
      { time: FIRED + 30, value: Number.NaN },
    ];
    const d = chartData(spec, [{ metric: {}, points }], w);
    expect(d.fired).toEqual({ time: FIRED + 15, value: 0.96 });
    expect(d.latest).toEqual({ time: FIRED + 15, value: 0.96 });
  });

  it('fits a growing memory series and projects it to capacity, extending the x-axis', () => {
    const memory = {
      ...spec,
      unit: 'mebibytes' as const,
      threshold: undefined,
      memory: { windowSeconds: 6 * 3600, capacityMiB: 80_000 },
    };
    const mw = chartWindow(memory, FIRED + 600);
    // 1,000 MiB/h from 60,000 MiB: 80,000 MiB is reached 20 h after the window's start.
    const points = series(mw.start, mw.end, mw.step, (t) => 60_000 + ((t - mw.start) / 3600) * 1000);
    const d = chartData(memory, [{ metric: {}, points }], mw);
    expect(d.trend?.trend.growing).toBe(true);
    expect(d.trend?.fit[0].value).toBeCloseTo(60_000, 0);
    expect(d.trend?.fit[1].value).toBeCloseTo(points.at(-1)!.value, 0);
    // 20 h after the start is past the edge (the window again to the right): the projection stops there.
    const edge = mw.end + (mw.end - mw.start);
    expect(d.trend?.projection?.[1].time).toBe(edge);
    expect(d.xMax).toBe(edge);
    expect(d.capacityMiB).toBe(80_000);
  });

  it('projects to capacity when it is reached within the edge, and not at all without growth', () => {
    const memory = {
      ...spec,
      unit: 'mebibytes' as const,
      threshold: undefined,
      memory: { windowSeconds: 6 * 3600, capacityMiB: 70_000 },
    };
    const mw = chartWindow(memory, FIRED + 600);
    const rising = series(mw.start, mw.end, mw.step, (t) => 60_000 + ((t - mw.start) / 3600) * 1000);
    const full = chartData(memory, [{ metric: {}, points: rising }], mw).trend?.projection?.[1];
    expect(full?.value).toBe(70_000);
    expect(full?.time).toBeCloseTo(mw.start + 10 * 3600, -1);
    const flat = chartData(memory, [{ metric: {}, points: series(mw.start, mw.end, mw.step, () => 60_000) }], mw);
    expect(flat.trend?.projection).toBeUndefined();
    expect(flat.xMax).toBe(mw.end);
  });

  it('keeps the threshold off the x-axis: ratios and counts from 0, the threshold inside with room above for labels', () => {
    // VLLMErrorRateHigh: 10.71% against > 5% (the y-axis used to start at the threshold, 0.05).
    const ratio = { ...spec, unit: 'ratio' as const, threshold: { op: '>' as const, value: 0.05 } };
    const d = chartData(
      ratio,
      [{ metric: {}, points: series(w.start, w.end, w.step, (t) => (t < FIRED ? 0.01 : 0.1071)) }],
      w,
    );
    expect(d.yMin).toBe(0);
    expect(d.yMax).toBeGreaterThan(0.1071 * 1.1);
    // A unit without a natural zero: the threshold and the values inside, with a margin either side.
    const high = chartData(spec, [{ metric: {}, points: series(w.start, w.end, w.step, () => 0.97) }], w);
    expect(high.yMin).toBeLessThan(0.95);
    expect(high.yMin).toBeGreaterThan(0);
    expect(high.yMax).toBeGreaterThan(0.97);
    // No data: the threshold alone, still away from the axis.
    const empty = chartData(ratio, [], w);
    expect([empty.yMin, empty.yMax >= 0.05 * 1.1]).toEqual([0, true]);
  });
});
