/**
 * `GET /v1/chart/<token>.png` through the app as served, against a loopback Prometheus that speaks
 * the real range-query API: the PNG, its headers, the query sent, every refusal, and Prometheus
 * unreachable or failing.
 */
import { PNG } from 'pngjs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadRenderer } from '../../shared/chart/load.js';
import { chartRoutes, MAX_CHART_SERIES, type ChartRouteDeps } from '../../shared/chart/routes.js';
import { signChartToken } from '../../shared/chart/token.js';
import { CHART_PATH, chartUrl } from '../../shared/chart/url.js';
import { Secret } from '../../shared/core/secret.js';
import { createLogger, type Logger } from '../../shared/core/logger.js';
import { PrometheusClient } from '../../shared/prometheus/client.js';
import {
  CHART_ALERT,
  CHART_FIRED_MS,
  CHART_KEY,
  CHART_NOW_MS,
  CHART_SETTINGS,
  matrixResponder,
  queryParams,
  risingRatio,
} from '../helpers/chart.js';
import { startLoopback, type Loopback } from '../helpers/loopback.js';
import { Hono } from 'hono';
import { createApp } from '../../shared/http/app.js';
import { testDeps } from '../helpers/pipeline-deps.js';
import type { Metrics } from '../../shared/metrics/catalogue.js';

const KEY = CHART_KEY;
const alert = CHART_ALERT;
const FIRED_MS = CHART_FIRED_MS;
const NOW = CHART_NOW_MS;
const settings = CHART_SETTINGS;

describe('GET /v1/chart/<token>.png', () => {
  let prometheus: Loopback;
  let logs: { level: string; event: string; fields: Record<string, unknown> }[];
  let now: number;

  const deps = (overrides: Partial<ChartRouteDeps> = {}): ChartRouteDeps => ({
    keys: { current: KEY },
    prometheus: new PrometheusClient(prometheus.url, { queryTimeoutMs: 2000, retryDelayMs: 10 }),
    renderer: loadRenderer,
    timeoutMs: 5000,
    logger: recordingLogger(logs),
    now: () => now,
    ...overrides,
  });
  const app = (d: ChartRouteDeps) => new Hono().route(CHART_PATH, chartRoutes(d));
  const pathOf = (url: string) => new URL(url).pathname;

  beforeAll(async () => {
    prometheus = await startLoopback(
      matrixResponder({ instance: '127.0.0.1:9800', job: 'vllm', model_name: 'qwen3-8b' }, (t) =>
        risingRatio(t, FIRED_MS / 1000),
      ),
    );
  });
  afterAll(() => prometheus?.close());
  beforeEach(() => {
    prometheus.requests.length = 0;
    logs = [];
    now = NOW;
  });

  it('draws the PNG from a range query of the spec over the chart window; the GET changes nothing', async () => {
    const res = await app(deps()).request(pathOf(chartUrl(alert, settings, NOW)!));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(res.headers.get('cache-control')).toBe('private, max-age=60');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const png = PNG.sync.read(Buffer.from(await res.arrayBuffer()));
    expect([png.width, png.height]).toEqual([800, 360]);
    expect(prometheus.requests).toHaveLength(1);
    const [request] = prometheus.requests;
    expect(request!.path.startsWith('/api/v1/query_range')).toBe(true);
    const p = queryParams(request!);
    expect(p.get('query')).toBe(
      'vllm:gpu_cache_usage_perc{model_name="qwen3-8b",instance="127.0.0.1:9800",job="vllm"}',
    );
    // Fired 30 min ago: a 15-minute lead (a third of the time since, at least 15 min), to now, 15 s steps.
    expect([Number(p.get('start')), Number(p.get('end')), Number(p.get('step'))]).toEqual([
      Math.floor(FIRED_MS / 1000) - 900,
      Math.floor(NOW / 1000),
      15,
    ]);
  }, 30_000);

  it('answers HEAD like GET, without a body', async () => {
    const res = await app(deps()).request(pathOf(chartUrl(alert, settings, NOW)!), { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    expect((await res.arrayBuffer()).byteLength).toBe(0);
  }, 30_000);

  it('refuses forged (403), expired (410) and malformed (400) links with a page that names no token or query, never cached', async () => {
    const url = pathOf(chartUrl(alert, settings, NOW)!);
    const forged = pathOf(
      chartUrl(alert, { ...settings, keys: { current: new Secret('another-secret-0123456789abcdefghij') } }, NOW)!,
    );
    const cases: [string, number, number][] = [
      [forged, 403, NOW],
      [url, 410, NOW + 3601_000],
      [`${CHART_PATH}/not-a-token.png`, 400, NOW],
      [url.replace(/\.png$/, ''), 400, NOW],
    ];
    for (const [path, status, at] of cases) {
      now = at;
      const res = await app(deps()).request(path);
      expect(res.status, path).toBe(status);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(res.headers.get('cache-control')).toBe('no-store');
      const body = await res.text();
      expect(body).toMatch(/Chart link not valid/);
      expect(body).not.toContain('gpu_cache_usage');
      expect(body).not.toContain(path.split('/').pop()!.slice(0, 20));
    }
    expect(prometheus.requests).toHaveLength(0);
    expect(logs.filter((l) => l.event === 'chart link refused').map((l) => l.fields.problem)).toEqual([
      'forged',
      'expired',
      'malformed',
      'malformed',
    ]);
  }, 30_000);

  it('answers 503 with a PNG saying so when Prometheus is unreachable or refuses the query', async () => {
    const down = await app(
      deps({ prometheus: new PrometheusClient('http://127.0.0.1:9', { queryTimeoutMs: 1000, retryDelayMs: 10 }) }),
    ).request(pathOf(chartUrl(alert, settings, NOW)!));
    expect(down.status).toBe(503);
    expect(down.headers.get('content-type')).toBe('image/png');
    expect(down.headers.get('cache-control')).toBe('no-store');
    expect(down.headers.get('retry-after')).toBe('30');
    expect(PNG.sync.read(Buffer.from(await down.arrayBuffer())).width).toBe(800);

    prometheus.reply({
      status: 400,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'error', errorType: 'bad_data', error: 'parse error' }),
    });
    const refused = await app(deps()).request(pathOf(chartUrl(alert, settings, NOW)!));
    expect(refused.status).toBe(503);
    expect(refused.headers.get('content-type')).toBe('image/png');
    expect(logs.filter((l) => l.event === 'chart query failed')).toHaveLength(2);
  }, 30_000);

  it('says why in the 503 image: timeout, unreachable, too large', async () => {
    const path = pathOf(chartUrl(alert, settings, NOW)!);
    const down = await app(
      deps({ prometheus: new PrometheusClient('http://127.0.0.1:9', { queryTimeoutMs: 1000, retryDelayMs: 10 }) }),
    ).request(path);
    prometheus.reply({ hang: true });
    const slow = await app(
      deps({ prometheus: new PrometheusClient(prometheus.url, { queryTimeoutMs: 200, retryDelayMs: 10 }) }),
    ).request(path);
    const huge = await app(
      deps({ prometheus: new PrometheusClient(prometheus.url, { maxResponseBytes: 1000 }) }),
    ).request(path);
    expect([down.status, slow.status, huge.status]).toEqual([503, 503, 503]);
    expect(logs.filter((l) => l.event === 'chart query failed').map((l) => l.fields.cause)).toEqual([
      'unreachable',
      'timeout',
      'too_large',
    ]);
  }, 30_000);

  it('refuses an answer of more series than a chart draws (too large), within the byte cap', async () => {
    const path = pathOf(chartUrl(alert, settings, NOW)!);
    const result = Array.from({ length: MAX_CHART_SERIES + 1 }, (_, i) => ({
      metric: { instance: `10.0.0.${i}:8000` },
      values: [[NOW / 1000, '1']],
    }));
    prometheus.reply({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'success', data: { resultType: 'matrix', result } }),
    });
    const res = await app(deps()).request(path);
    expect(res.status).toBe(503);
    expect(logs.filter((l) => l.event === 'chart query failed').map((l) => l.fields.cause)).toEqual(['too_large']);
  }, 30_000);

  it('draws at most maxConcurrent charts at once; more answer 503 with Retry-After at once', async () => {
    prometheus.reply({ hang: true });
    const a = app(deps({ maxConcurrent: 1, timeoutMs: 1500 }));
    const path = pathOf(chartUrl(alert, settings, NOW)!);
    const other = { ...alert, labels: { ...alert.labels, instance: '127.0.0.1:9801' } };
    const first = a.request(path);
    while (prometheus.requests.length === 0) await new Promise((r) => setTimeout(r, 10));
    // Another chart (the same chart would await the drawing under way: chart-inflight.test.ts).
    const second = await a.request(pathOf(chartUrl(other, settings, NOW)!));
    expect(second.status).toBe(503);
    expect(second.headers.get('retry-after')).toBe('5');
    expect(prometheus.requests).toHaveLength(1);
    expect((await first).status).toBe(503);
    now += 31_000; // past the failure's Retry-After, which it is kept for
    expect((await a.request(path)).status).toBe(200);
  }, 30_000);

  it('draws a link at most once a minute: GETs within it answer from the cache without a query; a failure is kept for its Retry-After', async () => {
    const a = app(deps());
    const path = pathOf(chartUrl(alert, settings, NOW)!);
    const first = await a.request(path);
    expect(first.status).toBe(200);
    const png = Buffer.from(await first.arrayBuffer());
    for (let i = 0; i < 5; i++) {
      const again = await a.request(path);
      expect(again.status).toBe(200);
      expect(Buffer.from(await again.arrayBuffer()).equals(png)).toBe(true);
    }
    expect(prometheus.requests).toHaveLength(1);
    now += 61_000;
    expect((await a.request(path)).status).toBe(200);
    expect(prometheus.requests).toHaveLength(2);

    prometheus.reply({
      status: 400,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'error', errorType: 'bad_data', error: 'parse error' }),
    });
    now += 61_000;
    expect((await a.request(path)).status).toBe(503);
    const asked = prometheus.requests.length;
    expect((await a.request(path)).status).toBe(503);
    expect(prometheus.requests).toHaveLength(asked);
  }, 30_000);

  it('caches by what the link means, not its text: a new token per page view for the same chart costs no query', async () => {
    const a = app(deps());
    // Each page view (and each message) signs the chart anew: another expiry, another token, the same chart.
    const paths = [0, 7, 30, 45].map((s) => pathOf(chartUrl(alert, settings, NOW + s * 1000)!));
    expect(new Set(paths).size).toBe(paths.length);
    for (const path of paths) expect((await a.request(path)).status).toBe(200);
    expect(prometheus.requests).toHaveLength(1);
    // Another alert's chart (other labels) is its own.
    const other = { ...alert, labels: { ...alert.labels, instance: '127.0.0.1:9801' } };
    expect((await a.request(pathOf(chartUrl(other, settings, NOW)!))).status).toBe(200);
    expect(prometheus.requests).toHaveLength(2);
    // Bounded in time: a minute on, the chart is drawn again.
    now += 61_000;
    expect((await a.request(paths[0]!)).status).toBe(200);
    expect(prometheus.requests).toHaveLength(3);
  }, 30_000);

  it('answers 503 text when the renderer cannot be loaded, and logs it', async () => {
    const res = await app(
      deps({ renderer: () => Promise.reject(new Error('Cannot find module chart/renderer.mjs')) }),
    ).request(pathOf(chartUrl(alert, settings, NOW)!));
    expect(res.status).toBe(503);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(logs.map((l) => [l.level, l.event])).toContainEqual(['error', 'chart failed']);
  });

  it('answers other methods 405 through the app, logs no token at error level and counts no webhook request', async () => {
    const counted: unknown[] = [];
    const metrics: Metrics = {
      inc: (...args) => void counted.push(args),
      observe: () => undefined,
      set: () => undefined,
    };
    const full = createApp(
      { allowUnauthenticated: true },
      { ...testDeps({ logger: recordingLogger(logs), now: () => now, metrics }), chartRoutes: deps() },
    );
    const path = pathOf(chartUrl(alert, settings, NOW)!);
    for (const method of ['POST', 'PUT', 'DELETE']) {
      for (const p of [path, `${path}/extra`]) {
        const res = await full.request(p, { method });
        expect(res.status).toBe(405);
        expect(res.headers.get('allow')).toBe('GET, HEAD');
        expect(await res.text()).not.toContain(path.split('/').pop()!.slice(0, 20));
      }
    }
    expect(counted).toEqual([]);
    expect(logs.filter((l) => l.level === 'error')).toEqual([]);
    expect(JSON.stringify(logs)).not.toContain(path.split('/').pop()!.slice(0, 20));
    expect(prometheus.requests).toHaveLength(0);
  });

  it('a token signed for one chart cannot be re-used with another query (signature over the whole spec)', async () => {
    const token = signChartToken(
      { query: 'up', labels: {}, title: 't', unit: 'none', firedAt: FIRED_MS / 1000 },
      NOW / 1000 + 60,
      { current: KEY },
    );
    const [payload, signature] = token.split('.');
    const other = Buffer.from(
      Buffer.from(payload!, 'base64url').toString().replace('"up"', '"secret_metric"'),
    ).toString('base64url');
    const res = await app(deps()).request(`${CHART_PATH}/${other}.${signature}.png`);
    expect(res.status).toBe(403);
    expect(prometheus.requests).toHaveLength(0);
  });
});

function recordingLogger(into: { level: string; event: string; fields: Record<string, unknown> }[]): Logger {
  return createLogger('debug', (line) => {
    const record = JSON.parse(line) as { level: string; event: string } & Record<string, unknown>;
    into.push({ level: record.level, event: record.event, fields: record });
  });
}
