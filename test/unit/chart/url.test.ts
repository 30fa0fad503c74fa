import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { verifyAckToken } from '../../../shared/ack/token.js';
import { chartSpec, ruleThreshold } from '../../../shared/chart/spec.js';
import { ChartTokenError, signChartToken, verifyChartToken } from '../../../shared/chart/token.js';
import { chartUrl, MAX_CHART_URL_CHARS, withChartUrl, type ChartLinkSettings } from '../../../shared/chart/url.js';
import { Secret } from '../../../shared/core/secret.js';
import type { EnrichedAlert } from '../../../shared/enrich/types.js';
import { fixture } from '../../helpers/fixtures.js';

const NOW = Date.parse('2026-11-29T12:45:00Z');
const KEY = new Secret('current-ack-secret-0123456789abcdef');
const OLD = new Secret('previous-ack-secret-0123456789abcdef');
const SETTINGS: ChartLinkSettings = {
  publicUrl: 'https://ops.example.com/alerts',
  keys: { current: KEY },
  ttlSeconds: 3600,
};

const kvAlert = (): EnrichedAlert => ({
  ...fixture('firing-kv-cache-critical').alerts[0]!,
  enrichment: { status: 'unavailable', kind: 'kv_cache', reason: 'no data' },
});

function tokenOf(url: string): string {
  return new URL(url).pathname
    .split('/')
    .pop()!
    .replace(/\.png$/, '');
}

function problem(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof ChartTokenError) return err.problem;
    throw err;
  }
  return 'accepted';
}

describe('ruleThreshold', () => {
  it.each([
    ['vllm:gpu_cache_usage_perc > 0.95', { op: '>', value: 0.95 }],
    ['sum by (model_name) (vllm:num_requests_waiting) >= 50', { op: '>=', value: 50 }],
    ['x < bool 1e-3', { op: '<', value: 0.001 }],
    ['rate(x[5m]) != 0 ', { op: '!=', value: 0 }],
  ])('%s', (expr, threshold) => {
    expect(ruleThreshold(expr)).toEqual(threshold);
  });

  it.each([
    'up',
    'a > b',
    'x > Inf',
    'x > NaN',
    '(x > 1) and y',
    'vllm:a > 0.9 and vllm:b > 5',
    'up == 0 or waiting > 50',
    'x > 0 > 1',
    'x > 1 unless y',
  ])('none in %s', (expr) => {
    expect(ruleThreshold(expr)).toBeUndefined();
  });
});

describe('chartSpec', () => {
  it("charts a rule's compared value with its threshold", () => {
    expect(chartSpec(kvAlert())).toEqual({
      query: 'vllm:gpu_cache_usage_perc{model_name="qwen3-8b",instance="127.0.0.1:9800",job="vllm"}',
      labels: kvAlert().labels,
      // No enriched signal to name it: titled with the alert's name (was "· rule expression").
      title: 'VLLMKVCacheNearlyFull',
      unit: 'none',
      firedAt: Math.floor(Date.parse('2026-11-29T12:42:23.143Z') / 1000),
      threshold: { op: '>', value: 0.95 },
    });
  });

  it("charts a rule's compared signal in the signal's unit and name, as the message shows it", () => {
    const kv = {
      name: 'kv_cache_usage_ratio',
      label: 'KV cache usage',
      value: 0.6626,
      unit: 'ratio' as const,
      query: 'max by (instance) (vllm:kv_cache_usage_perc or vllm:gpu_cache_usage_perc)',
    };
    const other = {
      name: 'requests_waiting',
      label: 'Requests waiting',
      value: 3,
      unit: 'count' as const,
      query: 'sum(vllm:num_requests_waiting)',
    };
    const alert: EnrichedAlert = {
      ...kvAlert(),
      enrichment: { status: 'enriched', kind: 'kv_cache', signals: [other, kv] },
    };
    expect(chartSpec(alert)).toMatchObject({
      query: 'vllm:gpu_cache_usage_perc{model_name="qwen3-8b",instance="127.0.0.1:9800",job="vllm"}',
      title: 'VLLMKVCacheNearlyFull · KV cache usage',
      unit: 'ratio',
      threshold: { op: '>', value: 0.95 },
    });
    // A signal about other metrics does not lend its unit or name.
    const unrelated: EnrichedAlert = {
      ...kvAlert(),
      enrichment: { status: 'enriched', kind: 'kv_cache', signals: [other] },
    };
    expect(chartSpec(unrelated)).toMatchObject({ title: 'VLLMKVCacheNearlyFull', unit: 'none' });
    // Functions and grouping labels are not metrics: a TTFT signal does not name an end-to-end latency rule.
    const ttft = {
      name: 'ttft_p95_seconds',
      label: 'TTFT p95',
      value: 2,
      unit: 'seconds' as const,
      query: 'histogram_quantile(0.95, sum by (le, model_name) (rate(vllm:time_to_first_token_seconds_bucket[5m])))',
    };
    const e2e = {
      ...kvAlert(),
      generatorURL: `http://p/graph?g0.expr=${encodeURIComponent('histogram_quantile(0.95, sum by (le, model_name) (rate(vllm:e2e_request_latency_seconds_bucket[5m]))) > 20')}`,
    };
    expect(chartSpec({ ...e2e, enrichment: { status: 'enriched', kind: 'latency', signals: [ttft] } })).toMatchObject({
      unit: 'none',
      threshold: { value: 20 },
    });
  });

  it("charts a target's `up` (1 → 0) for an alert about a target not answering scrapes", () => {
    const expr =
      'up{job=~"(?i).*vllm.*"} == 0\n  or\n(up == 0 and on (job, instance) group by (job, instance) (present_over_time(vllm:num_requests_running[1d])))';
    const alert: EnrichedAlert = {
      ...kvAlert(),
      labels: { alertname: 'VLLMServerDown', job: 'vllm', instance: '10.0.0.7:8000', severity: 'critical' },
      generatorURL: `http://prometheus:9090/graph?g0.expr=${encodeURIComponent(expr)}&g0.tab=1`,
      enrichment: {
        status: 'enriched',
        kind: 'error_rate',
        signals: [{ name: 'http_5xx_ratio', label: 'HTTP 5xx share', value: null, unit: 'ratio', query: 'x' }],
      },
    };
    expect(chartSpec(alert)).toMatchObject({
      query: 'up{job="vllm",instance="10.0.0.7:8000"}',
      title: 'VLLMServerDown · up (target answering scrapes)',
      unit: 'count',
    });
    expect(chartSpec(alert)?.threshold).toBeUndefined();
  });

  it("scopes a bare selector to the alert's identifying labels, escaped (never the whole fleet)", () => {
    const alert = kvAlert();
    alert.labels = { alertname: 'A', severity: 'page', model_name: 'q"}or{x', instance: 'h:1' };
    expect(chartSpec(alert)?.query).toBe('vllm:gpu_cache_usage_perc{model_name="q\\"}or{x",instance="h:1"}');
    alert.generatorURL = `http://prom/graph?g0.expr=${encodeURIComponent('up == 0')}`;
    alert.labels = { alertname: 'Down', instance: 'h:1', job: 'vllm', severity: 'page' };
    expect(chartSpec(alert)?.query).toBe('up{job="vllm",instance="h:1"}');
  });

  it('charts the memory series with its capacity for a memory trend', () => {
    const alert: EnrichedAlert = {
      ...kvAlert(),
      enrichment: {
        status: 'enriched',
        kind: 'gpu_memory',
        signals: [
          {
            name: 'gpu_memory_used_mib',
            label: 'GPU memory used',
            value: 70_000,
            unit: 'mebibytes',
            query: 'sum by (gpu) (DCGM_FI_DEV_FB_USED)',
          },
        ],
        trend: {
          growthMiBPerHour: 900,
          rSquared: 0.98,
          usedMiB: 70_000,
          capacityMiB: 81_920,
          hoursToFull: 13.2,
          windowSeconds: 21_600,
          points: 360,
        },
      },
    };
    expect(chartSpec(alert)).toMatchObject({
      query: 'sum by (gpu) (DCGM_FI_DEV_FB_USED)',
      unit: 'mebibytes',
      memory: { windowSeconds: 21_600, capacityMiB: 81_920 },
      title: 'VLLMKVCacheNearlyFull · GPU memory used',
    });
    expect(chartSpec(alert)?.threshold).toBeUndefined();
  });

  it("falls back to the kind's first signal without a comparison, and to nothing without a start", () => {
    const alert: EnrichedAlert = {
      ...kvAlert(),
      generatorURL: '',
      enrichment: {
        status: 'enriched',
        kind: 'latency',
        signals: [
          {
            name: 'ttft_p95_seconds',
            label: 'TTFT p95',
            value: 2,
            unit: 'seconds',
            query: 'histogram_quantile(0.95, x)',
          },
        ],
      },
    };
    expect(chartSpec(alert)).toMatchObject({
      query: 'histogram_quantile(0.95, x)',
      unit: 'seconds',
      title: 'VLLMKVCacheNearlyFull · TTFT p95',
    });
    expect(chartSpec({ ...alert, startsAt: '0001-01-01T00:00:00Z' })).toBeUndefined();
    expect(
      chartSpec({ ...alert, enrichment: { status: 'unavailable', kind: 'latency', reason: 'timeout' } }),
    ).toBeUndefined();
  });
});

describe('chart URLs', () => {
  it('is PUBLIC_URL/v1/chart/<token>.png, signed with the ack key over "chart.v1." + payload, expiring after the TTL', () => {
    const url = chartUrl(kvAlert(), SETTINGS, NOW)!;
    expect(url).toMatch(/^https:\/\/ops\.example\.com\/alerts\/v1\/chart\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}\.png$/);
    const [payload, signature] = tokenOf(url).split('.');
    expect(signature).toBe(createHmac('sha256', KEY.reveal()).update(`chart.v1.${payload}`).digest('base64url'));
    const verified = verifyChartToken(tokenOf(url), { current: KEY }, NOW);
    expect(verified).toEqual({ spec: chartSpec(kvAlert()), locale: 'en', expiresAt: NOW / 1000 + 3600 });
  });

  it('is undefined without settings (no PUBLIC_URL, ACK_SECRET or PROMETHEUS_URL), or when too long for Slack', () => {
    expect(chartUrl(kvAlert(), undefined, NOW)).toBeUndefined();
    const long = { ...kvAlert(), labels: { ...kvAlert().labels, note: 'x'.repeat(MAX_CHART_URL_CHARS) } };
    expect(chartUrl(long, SETTINGS, NOW)).toBeUndefined();
  });

  it('sets chartUrl only on alerts shown in detail', () => {
    expect(withChartUrl(kvAlert(), true, SETTINGS, NOW).chartUrl).toBe(chartUrl(kvAlert(), SETTINGS, NOW));
    expect(withChartUrl(kvAlert(), false, SETTINGS, NOW)).toEqual(kvAlert());
    expect(withChartUrl(kvAlert(), true, undefined, NOW)).toEqual(kvAlert());
  });

  it('expires, refuses forged, altered and retired tokens, with the ack statuses', () => {
    const token = tokenOf(chartUrl(kvAlert(), SETTINGS, NOW)!);
    const [payload, signature] = token.split('.') as [string, string];
    expect(problem(() => verifyChartToken(token, { current: KEY }, NOW + 3600_000))).toBe('expired');
    expect(problem(() => verifyChartToken(token, { current: KEY }, NOW + 3599_000))).toBe('accepted');
    const altered = Buffer.from(
      JSON.stringify({ v: 1, spec: { ...chartSpec(kvAlert()), query: 'secret_metric' }, exp: NOW / 1000 + 3600 }),
    ).toString('base64url');
    expect(problem(() => verifyChartToken(`${altered}.${signature}`, { current: KEY }, NOW))).toBe('forged');
    expect(problem(() => verifyChartToken(token, { current: OLD }, NOW))).toBe('forged');
    expect(problem(() => verifyChartToken(`${payload}.${signature}.x`, { current: KEY }, NOW))).toBe('malformed');
    expect(problem(() => verifyChartToken('not a token', { current: KEY }, NOW))).toBe('malformed');
    const byOld = signChartToken(chartSpec(kvAlert())!, NOW / 1000 + 60, { current: OLD });
    expect(
      problem(() => verifyChartToken(byOld, { current: KEY, previous: { secret: OLD, untilMs: NOW + 1 } }, NOW)),
    ).toBe('accepted');
    expect(problem(() => verifyChartToken(byOld, { current: KEY, previous: { secret: OLD, untilMs: NOW } }, NOW))).toBe(
      'retired',
    );
  });

  it('is never an acknowledgement token (domain-separated signature)', () => {
    const token = tokenOf(chartUrl(kvAlert(), SETTINGS, NOW)!);
    expect(() => verifyAckToken(token, { current: KEY }, NOW)).toThrow(/signature does not match/);
  });
});
