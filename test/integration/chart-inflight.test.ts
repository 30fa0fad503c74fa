/**
 * Simultaneous GETs of one chart share one drawing. Slack, Feishu and a browser fetch a new message's
 * chart at the same moment; each used to draw it (a range query each), and past the concurrent-draw cap
 * the rest were answered 503 "too many charts". Through the real chart routes, against a loopback
 * Prometheus that counts its range queries and holds each answer until the test releases it.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Hono } from 'hono';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadRenderer } from '../../shared/chart/load.js';
import { chartRoutes, type ChartRouteDeps } from '../../shared/chart/routes.js';
import { CHART_PATH, chartUrl } from '../../shared/chart/url.js';
import { createLogger } from '../../shared/core/logger.js';
import { PrometheusClient } from '../../shared/prometheus/client.js';
import {
  CHART_ALERT,
  CHART_FIRED_MS,
  CHART_KEY,
  CHART_NOW_MS,
  CHART_SETTINGS,
  matrixResponder,
  risingRatio,
} from '../helpers/chart.js';
import type { RecordedRequest, ScriptedReply } from '../helpers/loopback.js';

const KEY = CHART_KEY;
const alert = CHART_ALERT;
const FIRED_MS = CHART_FIRED_MS;
const NOW = CHART_NOW_MS;
const settings = CHART_SETTINGS;
const pathOf = (url: string) => new URL(url).pathname;
/** Another alert's chart (another instance): its own drawing. */
const chartOf = (instance: string) =>
  pathOf(chartUrl({ ...alert, labels: { ...alert.labels, instance } }, settings, NOW)!);

/** A promise the test settles when it chooses. */
function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/**
 * A Prometheus stand-in that counts `/api/v1/query_range` requests and answers each only once
 * {@link release} is called (the real range-query answer, or `reply` when set).
 */
interface HeldPrometheus {
  url: string;
  queries: number;
  /** Resolves once `count` queries have arrived. */
  received(count: number): Promise<void>;
  /** Answers every held query and every later one at once. */
  release(): void;
  /** An answer instead of the series (an error answer). */
  reply?: ScriptedReply;
  /** Shuts the gate, forgets the count and the reply (before each test). */
  reset(): void;
  close(): Promise<void>;
}

async function heldPrometheus(): Promise<HeldPrometheus> {
  const series = matrixResponder({ instance: '127.0.0.1:9800', job: 'vllm', model_name: 'qwen3-8b' }, (t) =>
    risingRatio(t, FIRED_MS / 1000),
  );
  let gate = deferred();
  const waiting: { count: number; resolve: () => void }[] = [];
  const held: HeldPrometheus = {
    url: '',
    queries: 0,
    received: (count) => {
      if (held.queries >= count) return Promise.resolve();
      const wait = deferred();
      waiting.push({ count, resolve: wait.resolve });
      return wait.promise;
    },
    release: () => gate.resolve(),
    reset: () => {
      gate = deferred();
      held.queries = 0;
      held.reply = undefined;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const recorded: RecordedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks),
      };
      if (recorded.path.startsWith('/api/v1/query_range')) held.queries++;
      for (const w of waiting.filter((w) => held.queries >= w.count)) w.resolve();
      await gate.promise;
      const reply = held.reply ?? series(recorded);
      res.writeHead(reply.status ?? 200, reply.headers ?? {});
      res.end(reply.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  held.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return held;
}

describe('GET /v1/chart/<token>.png, simultaneous requests', () => {
  let prometheus: HeldPrometheus;

  const deps = (overrides: Partial<ChartRouteDeps> = {}): ChartRouteDeps => ({
    keys: { current: KEY },
    prometheus: new PrometheusClient(prometheus.url, { queryTimeoutMs: 5000, retryDelayMs: 10 }),
    renderer: loadRenderer,
    timeoutMs: 10_000,
    logger: createLogger('error', () => undefined),
    now: () => NOW,
    ...overrides,
  });
  const app = (d: ChartRouteDeps) => new Hono().route(CHART_PATH, chartRoutes(d));
  /** Sends `paths` at once; answers once the stand-in has `queries` queries in hand and is released. */
  const burst = async (a: Hono, paths: string[], queries: number) => {
    const responses = Promise.all(paths.map((p) => a.request(p)));
    await prometheus.received(queries);
    prometheus.release();
    return Promise.all(
      (await responses).map(async (r) => ({ status: r.status, r, bytes: Buffer.from(await r.arrayBuffer()) })),
    );
  };

  beforeAll(async () => {
    prometheus = await heldPrometheus();
  });
  afterAll(() => prometheus?.close());
  beforeEach(() => prometheus.reset());

  it('20 GETs of one chart at once: one range query, all answered 200 with the same PNG', async () => {
    const path = chartOf('127.0.0.1:9800');
    const answers = await burst(app(deps()), Array(20).fill(path), 1);
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    expect(new Set(answers.map((a) => a.bytes.toString('base64'))).size).toBe(1);
    expect(answers[0]!.r.headers.get('content-type')).toBe('image/png');
    expect(prometheus.queries).toBe(1);
  }, 30_000);

  it('3 GETs of a chart with fresh tokens (one per viewer) at once: one range query', async () => {
    const paths = [0, 1, 2].map((s) => pathOf(chartUrl(alert, settings, NOW + s * 1000)!));
    expect(new Set(paths).size).toBe(3);
    const answers = await burst(app(deps()), paths, 1);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(prometheus.queries).toBe(1);
  }, 30_000);

  it('a failed drawing is shared too: one query, every waiter answered the same 503 PNG', async () => {
    prometheus.reply = {
      status: 400,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'error', errorType: 'bad_data', error: 'parse error' }),
    };
    const answers = await burst(app(deps()), Array(6).fill(chartOf('127.0.0.1:9800')), 1);
    expect(answers.map((a) => a.status)).toEqual(Array(6).fill(503));
    expect(answers.map((a) => a.r.headers.get('content-type'))).toEqual(Array(6).fill('image/png'));
    expect(new Set(answers.map((a) => a.bytes.toString('base64'))).size).toBe(1);
    expect(prometheus.queries).toBe(1);
  }, 30_000);

  it('a drawing that throws is shared and not kept: its waiters answer 503, the next GET draws anew', async () => {
    let loads = 0;
    let loaded = deferred();
    const renderer = () => {
      loads++;
      return loaded.promise.then(() => Promise.reject(new Error('Cannot find module chart/renderer.mjs')));
    };
    const a = app(deps({ renderer }));
    const path = chartOf('127.0.0.1:9800');
    const responses = Promise.all(Array.from({ length: 5 }, () => a.request(path)));
    loaded.resolve();
    const answers = await responses;
    expect(answers.map((r) => [r.status, r.headers.get('content-type')])).toEqual(
      Array(5).fill([503, 'text/plain; charset=UTF-8']),
    );
    expect(loads).toBe(1);
    loaded = deferred();
    loaded.resolve();
    expect((await a.request(path)).status).toBe(503);
    expect(loads).toBe(2);
    expect(prometheus.queries).toBe(0);
  }, 30_000);

  it('distinct charts still respect the cap; a GET of a chart being drawn joins it even when the cap is full', async () => {
    const a = app(deps({ maxConcurrent: 2 }));
    const [one, two, three] = ['127.0.0.1:9801', '127.0.0.1:9802', '127.0.0.1:9803'].map(chartOf);
    const drawing = [a.request(one!), a.request(two!)];
    await prometheus.received(2);
    const busy = await a.request(three!);
    expect(busy.status).toBe(503);
    expect(busy.headers.get('retry-after')).toBe('5');
    const joined = a.request(one!);
    prometheus.release();
    expect((await Promise.all([...drawing, joined])).map((r) => r.status)).toEqual([200, 200, 200]);
    expect(prometheus.queries).toBe(2);
    // Once drawn, the busy chart draws.
    expect((await a.request(three!)).status).toBe(200);
    expect(prometheus.queries).toBe(3);
  }, 30_000);
});
