/**
 * A chart linked from a zh-CN channel or page: its own words (title's signal name, subtitle, marks, time
 * axis, the no-data note, the 503 image) are Chinese, none of the product's English words is left, and
 * its times are in `TIME_ZONE`, which it names. The PNG side (glyphs, not boxes) is the golden images of
 * `render.test.ts` (`*-zh-cn.png`).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { chartData, chartWindow } from '../../../shared/chart/data.js';
import { renderChartSvg, renderMessageSvg } from '../../../shared/chart/render.js';
import { chartSpec, type ChartableAlert } from '../../../shared/chart/spec.js';
import { signChartToken, verifyChartToken } from '../../../shared/chart/token.js';
import { chartWords } from '../../../shared/chart/words.js';
import { Secret } from '../../../shared/core/secret.js';
import { setTimeZone } from '../../../shared/render/format.js';
import type { Point } from '../../../shared/prometheus/client.js';
import type { ChartSpec } from '../../../shared/chart/spec.js';
import { risingRatio } from '../../helpers/chart.js';

const FIRED = 1_795_000_000; // 2026-11-18 11:06:40 UTC, 19:06:40 in Asia/Shanghai
/** English words that stay English in Chinese text too (names of things, not the product's words). */
const KEPT = new Set(['prometheus', 'http', 'up', 'target', 'mib']);

/** Every word (2+ Latin letters) of the chart's English words that a zh-CN chart must not show. */
function englishWords(): Set<string> {
  const w = chartWords('en');
  const texts = [
    ...[w.fired, w.now, w.threshold, w.capacity, w.trend, w.noData, w.noSeries, w.upTitle, w.unavailable, w.unnamed],
    ...[...Object.values(w.failure), w.timeAxis(''), w.trendWords.noUpwardTrend, w.trendWords.fullIn('')],
  ];
  const words = texts.flatMap((t) => t.toLowerCase().match(/[a-z]{2,}/g) ?? []);
  return new Set(words.filter((word) => !KEPT.has(word)));
}

/** The SVG's text as a reader sees it (tags and attributes dropped, entities decoded). */
function textOf(svg: string): string {
  return svg
    .replace(/<[^>]+>/g, ' ')
    .replace(/&(amp|lt|gt|quot|#39|apos);/g, (m) => ({ '&amp;': '&', '&lt;': '<', '&gt;': '>' })[m] ?? "'");
}

function englishIn(text: string): string[] {
  const forbidden = englishWords();
  return (text.toLowerCase().match(/[a-z]+/g) ?? []).filter((word) => forbidden.has(word));
}

const kvAlert = (): ChartableAlert => ({
  status: 'firing',
  labels: { alertname: 'VLLMKVCacheNearlyFull', instance: '10.0.0.7:8000' },
  annotations: {},
  startsAt: new Date(FIRED * 1000).toISOString(),
  endsAt: '0001-01-01T00:00:00Z',
  generatorURL: 'http://prom/graph?g0.expr=vllm%3Agpu_cache_usage_perc+%3E+0.95',
  fingerprint: 'f1',
});

function sampled(spec: ChartSpec, now: number, value: (t: number) => number) {
  const w = chartWindow(spec, now);
  const points: Point[] = [];
  for (let t = w.start; t <= w.end; t += w.step) points.push({ time: t, value: value(t) });
  return chartData(spec, [{ metric: {}, points }], w);
}

afterEach(() => setTimeZone('UTC'));

describe('a zh-CN chart', () => {
  it('has no English word of its own in its SVG, with a threshold, a trend, and with no data', () => {
    setTimeZone('Asia/Shanghai');
    const kv = chartSpec(kvAlert(), 'zh-CN')!;
    expect(kv.threshold).toEqual({ op: '>', value: 0.95 });
    const memory: ChartSpec = {
      ...kv,
      title: 'GPUMemoryLeak · 显存用量',
      unit: 'mebibytes',
      threshold: undefined,
      memory: { windowSeconds: 6 * 3600, capacityMiB: 81_920 },
    };
    const charts = [
      sampled(kv, FIRED + 1800, (t) => risingRatio(t, FIRED)),
      sampled(memory, FIRED + 1800, (t) => 60_000 + ((t - FIRED + 6 * 3600) / 3600) * 1500),
      chartData(kv, [], chartWindow(kv, FIRED + 1800)),
    ];
    for (const data of charts) {
      const text = textOf(renderChartSvg({ ...data, locale: 'zh-CN' }));
      expect(englishIn(text)).toEqual([]);
      expect(text).toContain('触发');
      // The same chart in English does show them: the check can fail.
      expect(englishIn(textOf(renderChartSvg(data))).length).toBeGreaterThan(0);
    }
  }, 30_000);

  it('says why it is unavailable in Chinese (the 503 image)', () => {
    const w = chartWords('zh-CN');
    for (const sentence of Object.values(w.failure)) {
      const text = textOf(renderMessageSvg(w.unavailable, sentence));
      expect(englishIn(text)).toEqual([]);
      expect(text).toContain('趋势图暂不可用');
    }
  });

  it('shows its times and the now mark in TIME_ZONE, naming it, on the axis and in the subtitle', () => {
    setTimeZone('Asia/Shanghai');
    const data = { ...sampled(chartSpec(kvAlert(), 'zh-CN')!, FIRED + 1800, () => 0.97), locale: 'zh-CN' as const };
    const text = textOf(renderChartSvg(data));
    expect(text).toContain('触发 19:06 Asia/Shanghai：0.97');
    expect(text).toContain('现在 19:36 Asia/Shanghai：0.97');
    expect(text).toContain('时间（Asia/Shanghai）');
    expect(text).toMatch(/\b19:\d0\b/);
    expect(text).not.toMatch(/\b11:\d0\b/);
    setTimeZone('UTC');
    const utc = textOf(renderChartSvg({ ...data, locale: 'en' }));
    expect(utc).toContain('fired 11:06 UTC: 0.97');
    expect(utc).toContain('time (UTC)');
  });

  it('names its signal in Chinese in the title; the alert name stays as sent', () => {
    const alert: ChartableAlert = {
      ...kvAlert(),
      generatorURL: 'http://prom/graph?g0.expr=up+%3D%3D+0',
      labels: { alertname: 'VLLMServerDown', job: 'vllm', instance: '10.0.0.7:8000' },
    };
    expect(chartSpec(alert, 'zh-CN')?.title).toBe('VLLMServerDown · up（target 是否响应抓取）');
    expect(chartSpec(alert)?.title).toBe('VLLMServerDown · up (target answering scrapes)');
  });

  it('takes its language from the signed token: zh-CN written, English left out as before', () => {
    const keys = { current: new Secret('k'.repeat(32)) };
    const spec = chartSpec(kvAlert())!;
    const zh = signChartToken(spec, FIRED + 3600, keys, 'zh-CN');
    expect(verifyChartToken(zh, keys, FIRED * 1000).locale).toBe('zh-CN');
    const en = signChartToken(spec, FIRED + 3600, keys);
    expect(en).toBe(signChartToken(spec, FIRED + 3600, keys, 'en'));
    expect(Buffer.from(en.split('.')[0]!, 'base64url').toString()).not.toContain('lang');
    expect(verifyChartToken(en, keys, FIRED * 1000).locale).toBe('en');
  });
});
