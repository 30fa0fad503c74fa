/**
 * The chart renderer on fixture series: the PNG is compared by pixels with a golden image
 * (test/fixtures/chart/*.png, pixelmatch with a small tolerance: resvg draws the same pixels on every
 * platform with the bundled font, the tolerance only absorbs anti-aliasing differences), and checked
 * for what it must show (the series, the threshold, the fire mark) by colour.
 * After an intended change of the drawing: `UPDATE_CHART_GOLDEN=1 npx vitest run test/unit/chart/render.test.ts`,
 * then look at the new images before committing them.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import pixelmatch from 'pixelmatch';
import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import { chartData, chartWindow } from '../../../shared/chart/data.js';
import {
  CHART_HEIGHT,
  CHART_WIDTH,
  chartSubtitle,
  markedPoints,
  renderChartPng,
  renderMessagePng,
} from '../../../shared/chart/render.js';
import type { ChartSpec } from '../../../shared/chart/spec.js';
import type { Point } from '../../../shared/prometheus/client.js';
import { setTimeZone } from '../../../shared/render/format.js';
import { risingRatio } from '../../helpers/chart.js';
import { pixelsNear } from '../../helpers/png.js';

const GOLDEN = new URL('../../fixtures/chart/', import.meta.url);
/** Share of pixels allowed to differ from the golden image (anti-aliasing, not content). */
const MAX_DIFF_RATIO = 0.002;
const FIRED = 1_795_000_000;

const kv: ChartSpec = {
  query: 'vllm:gpu_cache_usage_perc',
  labels: {},
  title: 'VLLMKVCacheNearlyFull · KV cache usage',
  unit: 'ratio',
  firedAt: FIRED,
  threshold: { op: '>', value: 0.95 },
};
// VLLMErrorRateHigh as reported: 10.71% against > 5%, the value labels and "fired" once overlapped.
const errorRate: ChartSpec = {
  query: 'x',
  labels: {},
  title: 'VLLMErrorRateHigh · HTTP 5xx share',
  unit: 'ratio',
  firedAt: FIRED,
  threshold: { op: '>', value: 0.05 },
};
// VLLMServerDown: the target's up, 1 until it stopped answering, then 0.
const down: ChartSpec = {
  query: 'up{job="vllm",instance="10.0.0.7:8000"}',
  labels: {},
  title: 'VLLMServerDown · up (target answering scrapes)',
  unit: 'count',
  firedAt: FIRED,
};
const memory: ChartSpec = {
  query: 'sum(DCGM_FI_DEV_FB_USED)',
  labels: {},
  title: 'GPUMemoryLeak · GPU memory used',
  unit: 'mebibytes',
  firedAt: FIRED,
  memory: { windowSeconds: 6 * 3600, capacityMiB: 81_920 },
};

function sampled(spec: ChartSpec, now: number, value: (t: number) => number) {
  const w = chartWindow(spec, now);
  const points: Point[] = [];
  for (let t = w.start; t <= w.end; t += w.step) points.push({ time: t, value: value(t) });
  return chartData(spec, [{ metric: {}, points }], w);
}

const FIXTURES_EN = {
  'kv-cache-threshold': () => sampled(kv, FIRED + 1800, (t) => risingRatio(t, FIRED)),
  // 1,500 MiB/h with a deterministic ripple: fitted, projected toward 81,920 MiB.
  'memory-trend': () =>
    sampled(
      memory,
      FIRED + 1800,
      (t) => 60_000 + ((t - (FIRED - 6 * 3600 + 1800)) / 3600) * 1500 + ((t / 60) % 7) * 20,
    ),
  'no-data': () => chartData(kv, [], chartWindow(kv, FIRED + 1800)),
  'target-down-up': () => sampled(down, FIRED + 900, (t) => (t < FIRED - 60 ? 1 : 0)),
  'error-rate-ratio': () => sampled(errorRate, FIRED + 60, (t) => (t < FIRED - 300 ? 0.08 : 0.1071)),
};
const FIXTURES = {
  ...FIXTURES_EN,
  // zh-CN links (Feishu, DingTalk, WeCom, a Chinese page) with TIME_ZONE=Asia/Shanghai: every word of the
  // chart's own is Chinese (the bundled CJK subset, no boxes), the times 8 h ahead of the UTC ones.
  'memory-trend-zh-cn': () => ({
    ...FIXTURES_EN['memory-trend'](),
    title: 'GPUMemoryLeak · 显存用量',
    locale: 'zh-CN' as const,
  }),
  'no-data-zh-cn': () => ({
    ...FIXTURES_EN['no-data'](),
    title: 'VLLMKVCacheNearlyFull · KV cache 使用率',
    locale: 'zh-CN' as const,
  }),
};
/** The fixtures drawn in a time zone other than UTC. */
const ZONES: Partial<Record<keyof typeof FIXTURES, string>> = {
  'memory-trend-zh-cn': 'Asia/Shanghai',
  'no-data-zh-cn': 'Asia/Shanghai',
};

function compare(name: string, png: Uint8Array): number {
  const file = new URL(`${name}.png`, GOLDEN);
  if (process.env.UPDATE_CHART_GOLDEN || !existsSync(file)) {
    if (!process.env.UPDATE_CHART_GOLDEN)
      throw new Error(`no golden image ${file.pathname}: run with UPDATE_CHART_GOLDEN=1`);
    writeFileSync(file, png);
  }
  const actual = PNG.sync.read(Buffer.from(png));
  const golden = PNG.sync.read(readFileSync(file));
  expect([actual.width, actual.height]).toEqual([golden.width, golden.height]);
  return (
    pixelmatch(actual.data, golden.data, undefined, actual.width, actual.height, { threshold: 0.1 }) /
    (actual.width * actual.height)
  );
}

describe('chart renderer', () => {
  it.each(Object.keys(FIXTURES) as (keyof typeof FIXTURES)[])(
    '%s matches its golden image',
    async (name) => {
      setTimeZone(ZONES[name] ?? 'UTC');
      try {
        const png = await renderChartPng(FIXTURES[name]());
        expect(compare(name, png)).toBeLessThanOrEqual(MAX_DIFF_RATIO);
      } finally {
        setTimeZone('UTC');
      }
    },
    30_000,
  );

  it('draws the same bytes for the same data', async () => {
    const data = FIXTURES['kv-cache-threshold']();
    expect(Buffer.from(await renderChartPng(data)).equals(Buffer.from(await renderChartPng(data)))).toBe(true);
  }, 30_000);

  it('shows the series, the threshold and the fire mark in their colours; no data shows no series', async () => {
    const png = PNG.sync.read(Buffer.from(await renderChartPng(FIXTURES['kv-cache-threshold']())));
    expect([png.width, png.height]).toEqual([CHART_WIDTH, CHART_HEIGHT]);
    expect(pixelsNear(png, '#175cd3')).toBeGreaterThan(500);
    expect(pixelsNear(png, '#b42318')).toBeGreaterThan(200);
    expect(pixelsNear(png, '#b54708')).toBeGreaterThan(100);
    const empty = PNG.sync.read(Buffer.from(await renderChartPng(FIXTURES['no-data']())));
    expect(pixelsNear(empty, '#175cd3')).toBe(0);
    expect(pixelsNear(empty, '#b42318')).toBeGreaterThan(200);
  }, 30_000);

  it('labels the fired value only when it cannot overlap the latest', () => {
    const near = FIXTURES['error-rate-ratio']();
    expect(near.fired && near.latest && near.latest.time - near.fired.time).toBeLessThanOrEqual(60);
    expect(markedPoints(near).map((m) => m.label)).toEqual([false, true]);
    const far = FIXTURES['kv-cache-threshold']();
    expect(markedPoints(far).map((m) => m.label)).toEqual([true, true]);
  });

  it('dates the fire time in the subtitle unless the alert fired on the UTC day of now', () => {
    // FIRED is 2026-11-18 11:06:40 UTC.
    const sameDay = sampled(kv, FIRED + 1800, (t) => risingRatio(t, FIRED));
    expect(chartSubtitle(sameDay)).toMatch(/^fired 11:06 UTC: \S+ · now 11:36 UTC: /);
    // Two days old, still inside the chart's window: a bare "09:33" would read as today's.
    const twoDays = sampled(kv, FIRED + 2 * 86_400, (t) => risingRatio(t, FIRED));
    expect(twoDays.firedAt).toBeGreaterThanOrEqual(twoDays.xMin);
    expect(chartSubtitle(twoDays)).toMatch(/^fired 2026-11-18 11:06 UTC: \S+ · now 11:06 UTC: /);
    // Fired before the window (a month-old alert): dated, as before.
    const month = sampled(kv, FIRED + 30 * 86_400, (t) => risingRatio(t, FIRED));
    expect(chartSubtitle(month)).toMatch(/^fired 2026-11-18 11:06 UTC: no data · now 11:06 UTC: /);
  });

  it('draws the threshold above the x-axis when the series starts above it', async () => {
    const png = PNG.sync.read(Buffer.from(await renderChartPng(FIXTURES['error-rate-ratio']())));
    // The threshold line (dashed, red) is drawn, and not on the bottom rows of the plot (the x-axis).
    let lowest = 0;
    for (let y = 0; y < png.height; y++)
      for (let x = 120; x < 700; x++) {
        const i = (y * png.width + x) * 4;
        if (Math.abs(png.data[i]! - 0xb4) + Math.abs(png.data[i + 1]! - 0x23) + Math.abs(png.data[i + 2]! - 0x18) < 40)
          lowest = y;
      }
    expect(lowest).toBeGreaterThan(80);
    expect(lowest).toBeLessThan(CHART_HEIGHT - 36 - 40);
  }, 30_000);

  it('draws the fitted trend and its projection for memory', async () => {
    const png = PNG.sync.read(Buffer.from(await renderChartPng(FIXTURES['memory-trend']())));
    expect(pixelsNear(png, '#6941c6')).toBeGreaterThan(300);
  }, 30_000);

  it('draws text with characters invalid in XML 1.0 (C0 controls, U+FFFE) instead of failing', async () => {
    const data = { ...FIXTURES['kv-cache-threshold'](), title: 'KV\x01Cache\x0bHigh\ufffe\ud800 · rule expression' };
    const png = PNG.sync.read(Buffer.from(await renderChartPng(data)));
    expect([png.width, png.height]).toEqual([CHART_WIDTH, CHART_HEIGHT]);
    const message = PNG.sync.read(Buffer.from(await renderMessagePng('Chart\x01unavailable', 'bad\x0b\ufffe')));
    expect(message.width).toBe(CHART_WIDTH);
  }, 30_000);

  it('draws a message image of the same size', async () => {
    const png = PNG.sync.read(
      Buffer.from(await renderMessagePng('Chart unavailable', 'Prometheus could not be reached.')),
    );
    expect([png.width, png.height]).toEqual([CHART_WIDTH, CHART_HEIGHT]);
    expect(pixelsNear(png, '#b42318')).toBeGreaterThan(50);
  }, 30_000);
});
