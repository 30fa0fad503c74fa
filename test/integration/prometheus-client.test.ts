/**
 * The Prometheus client against a loopback HTTP server: the exact requests it sends (GET or POST,
 * time-out parameter), how it reads answers and errors, its per-query time-out and its one retry.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { PrometheusClient, PrometheusError } from '../../shared/prometheus/client.js';
import { MAX_GET_URL_CHARS } from '../../shared/prometheus/http.js';
import {
  close,
  listen,
  loadExchanges,
  readBody,
  requestParams,
  startReplayServer,
  type Received,
} from '../fixtures/prometheus/exchanges.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

/** A server answering every request with `handler`, recording what it received. */
async function serve(handler: Handler): Promise<{ url: string; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    void readBody(req).then((text) => {
      const { path, params } = requestParams(req, text);
      received.push({ method: req.method ?? '', path, contentType: req.headers['content-type'], params });
      handler(req, res);
    });
  });
  const url = await listen(server);
  closers.push(() => close(server));
  return { url, received };
}

const json =
  (status: number, body: unknown): Handler =>
  (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };

const vector = (...values: string[]) => ({
  status: 'success',
  data: {
    resultType: 'vector',
    result: values.map((v, i) => ({ metric: { __name__: 'm', i: String(i) }, value: [1795956300.5, v] })),
  },
});

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.unreachable('resolved'),
    (err: unknown) => err,
  );
}

describe('PrometheusClient.instantQuery', () => {
  it('GETs a short query with the evaluation time in Unix seconds and its time-out', async () => {
    const server = await serve(json(200, vector('1')));
    await new PrometheusClient(server.url, { queryTimeoutMs: 1500 }).instantQuery('sum(vllm:num_requests_waiting)', {
      time: new Date('2026-11-29T12:45:00.250Z'),
    });
    expect(server.received).toEqual([
      {
        method: 'GET',
        path: '/api/v1/query',
        contentType: undefined,
        params: { query: 'sum(vllm:num_requests_waiting)', time: '1795956300.25', timeout: '1500ms' },
      },
    ]);
  });

  it('POSTs a long query form-encoded, so no proxy cuts the URL', async () => {
    const server = await serve(json(200, vector('1')));
    const longExpr = `sum(${Array.from({ length: 400 }, (_, i) => `m{a="${i}&x=y"}`).join(' or ')})`;
    expect(longExpr.length).toBeGreaterThan(MAX_GET_URL_CHARS);
    await new PrometheusClient(server.url).instantQuery(longExpr, { time: new Date('2026-11-29T12:45:00.250Z') });
    expect(server.received).toEqual([
      {
        method: 'POST',
        path: '/api/v1/query',
        contentType: 'application/x-www-form-urlencoded',
        params: { query: longExpr, time: '1795956300.25', timeout: '10000ms' },
      },
    ]);
  });

  it('keeps a base path and ignores a trailing slash; no time means Prometheus now', async () => {
    const server = await serve(json(200, vector('1')));
    await new PrometheusClient(`${server.url}/prom/`).instantQuery('up');
    expect(server.received[0]).toMatchObject({ path: '/prom/api/v1/query', params: { query: 'up' } });
    expect(server.received[0]!.params.time).toBeUndefined();
  });

  it('parses values, NaN and ±Inf included, with labels and time', async () => {
    const server = await serve(json(200, { ...vector('0.25', 'NaN', '+Inf', '-Inf', '1e-05'), warnings: ['partial'] }));
    const { result, warnings } = await new PrometheusClient(server.url).instantQuery('m');
    expect(result.map((s) => s.value)).toEqual([0.25, Number.NaN, Infinity, -Infinity, 0.00001]);
    expect(result[0]).toEqual({ metric: { __name__: 'm', i: '0' }, time: 1795956300.5, value: 0.25 });
    expect(warnings).toEqual(['partial']);
  });

  it('returns a scalar as one sample without labels', async () => {
    const server = await serve(
      json(200, { status: 'success', data: { resultType: 'scalar', result: [1795956300, '2'] } }),
    );
    expect((await new PrometheusClient(server.url).instantQuery('1+1')).result).toEqual([
      { metric: {}, time: 1795956300, value: 2 },
    ]);
  });

  it('throws PrometheusError with the API errorType, error and warnings, and does not retry it', async () => {
    const server = await serve(
      json(422, {
        status: 'error',
        errorType: 'execution',
        error: 'expanding series: too many samples',
        warnings: ['partial response'],
      }),
    );
    const err = await rejection(new PrometheusClient(server.url).instantQuery('m'));
    expect(err).toBeInstanceOf(PrometheusError);
    expect(err).toMatchObject({
      errorType: 'execution',
      httpStatus: 422,
      message: 'expanding series: too many samples',
      warnings: ['partial response'],
    });
    expect(server.received).toHaveLength(1);
  });

  it('throws bad_response for a body that is not the API envelope (a proxy error page)', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end('<html>Bad Gateway</html>');
    });
    expect(await rejection(new PrometheusClient(server.url).instantQuery('m'))).toMatchObject({
      errorType: 'bad_response',
      httpStatus: 502,
    });
  });

  it('does not follow a redirect: a 3xx is an error naming it, and the redirect target is never asked', async () => {
    const target = await serve(json(200, vector('1')));
    for (const status of [301, 302, 307, 308]) {
      const server = await serve((_req, res) => {
        res.writeHead(status, { location: `${target.url}/api/v1/query` });
        res.end();
      });
      const err = await rejection(new PrometheusClient(server.url, { retryDelayMs: 10 }).instantQuery('m'));
      expect(err).toBeInstanceOf(PrometheusError);
      expect(err).toMatchObject({ errorType: 'redirect', httpStatus: status });
      expect((err as Error).message).toBe(
        `HTTP ${status}: Prometheus answered with a redirect, which is not followed; set PROMETHEUS_URL to the final URL`,
      );
      expect(server.received).toHaveLength(1);
    }
    expect(target.received).toHaveLength(0);
  });

  it('refuses an answer over maxResponseBytes as too_large, declared or streamed, without a retry', async () => {
    const big = JSON.stringify(vector(...Array.from({ length: 2000 }, () => '1')));
    const declared = await serve(json(200, JSON.parse(big)));
    const streamed = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(big.slice(0, 20_000));
      setTimeout(() => res.end(big.slice(20_000)), 20);
    });
    for (const server of [declared, streamed]) {
      const err = await rejection(
        new PrometheusClient(server.url, { maxResponseBytes: 10_000, retryDelayMs: 10 }).instantQuery('m'),
      );
      expect(err).toBeInstanceOf(PrometheusError);
      expect(err).toMatchObject({ errorType: 'too_large', httpStatus: 200 });
      expect(server.received).toHaveLength(1);
    }
    expect(
      (await new PrometheusClient(declared.url, { maxResponseBytes: big.length }).instantQuery('m')).result,
    ).toHaveLength(2000);
  });

  it('throws bad_response for an unparsable sample value or a matrix answer', async () => {
    const bad = await serve(json(200, vector('12abc')));
    expect(await rejection(new PrometheusClient(bad.url).instantQuery('m'))).toMatchObject({
      errorType: 'bad_response',
      httpStatus: 200,
    });
    const matrix = await serve(json(200, { status: 'success', data: { resultType: 'matrix', result: [] } }));
    expect(await rejection(new PrometheusClient(matrix.url).instantQuery('m[5m]'))).toMatchObject({
      errorType: 'bad_response',
    });
  });

  it("rejects with the signal reason when the caller's budget runs out, without a retry", async () => {
    const server = await serve(() => {});
    const err = await rejection(
      new PrometheusClient(server.url).instantQuery('m', { signal: AbortSignal.timeout(100) }),
    );
    expect(err).not.toBeInstanceOf(PrometheusError);
    expect(err).toMatchObject({ name: 'TimeoutError' });
    expect(server.received).toHaveLength(1);
  });

  it('throws a timeout PrometheusError when its own per-query time-out fires first, without a retry', async () => {
    const server = await serve(() => {});
    const err = await rejection(
      new PrometheusClient(server.url, { queryTimeoutMs: 100 }).instantQuery('m', {
        signal: AbortSignal.timeout(5000),
      }),
    );
    expect(err).toBeInstanceOf(PrometheusError);
    expect(err).toMatchObject({ errorType: 'timeout', message: 'no answer within 100 ms' });
    expect(server.received).toHaveLength(1);
  });

  it('throws a network PrometheusError when the connection is refused', async () => {
    const server = createServer();
    const url = await listen(server);
    await close(server);
    const err = await rejection(new PrometheusClient(url).instantQuery('m'));
    expect(err).toBeInstanceOf(PrometheusError);
    expect(err).toMatchObject({ errorType: 'network', message: 'Prometheus unreachable (ECONNREFUSED)' });
    expect((err as PrometheusError).httpStatus).toBeUndefined();
  });
});

describe('an answer cut off', () => {
  it('names the cut, not an unreachable Prometheus, after its one retry', async () => {
    // Headers and half a body, then the connection drops (a proxy or Prometheus itself restarting).
    const server = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"val');
      setImmediate(() => res.socket?.destroy());
    });
    const err = await rejection(new PrometheusClient(server.url, { retryDelayMs: 10 }).instantQuery('m'));
    expect(err).toBeInstanceOf(PrometheusError);
    expect(err).toMatchObject({
      errorType: 'network',
      message: 'Prometheus answered HTTP 200, but the connection dropped before the answer ended (ECONNRESET)',
    });
    expect(server.received).toHaveLength(2);
  });
});

describe('PrometheusClient retry', () => {
  const unavailable = json(503, { status: 'error', errorType: 'unavailable', error: 'TSDB not ready' });

  it('retries once after a 503 and returns the second answer', async () => {
    let calls = 0;
    const server = await serve((req, res) =>
      calls++ === 0 ? unavailable(req, res) : json(200, vector('7'))(req, res),
    );
    const { result } = await new PrometheusClient(server.url, { retryDelayMs: 10 }).instantQuery('m');
    expect(result[0]!.value).toBe(7);
    expect(server.received).toHaveLength(2);
  });

  it('gives up after the one retry with the 503 error body', async () => {
    const server = await serve(unavailable);
    const err = await rejection(new PrometheusClient(server.url, { retryDelayMs: 10 }).instantQuery('m'));
    expect(err).toMatchObject({ errorType: 'unavailable', httpStatus: 503, message: 'TSDB not ready' });
    expect(server.received).toHaveLength(2);
  });

  it('retries once after the connection dropped without an answer', async () => {
    let calls = 0;
    const server = await serve((req, res) => (calls++ === 0 ? req.socket.destroy() : json(200, vector('3'))(req, res)));
    const { result } = await new PrometheusClient(server.url, { retryDelayMs: 10 }).instantQuery('m');
    expect(result[0]!.value).toBe(3);
    expect(server.received).toHaveLength(2);
  });
});

describe('PrometheusClient.rangeQuery', () => {
  it('sends start, end and step and returns points per series', async () => {
    const server = await serve(
      json(200, {
        status: 'success',
        data: {
          resultType: 'matrix',
          result: [
            {
              metric: { gpu: '0' },
              values: [
                [1795956240, '100'],
                [1795956300, '+Inf'],
              ],
            },
          ],
        },
      }),
    );
    const { result } = await new PrometheusClient(server.url).rangeQuery('DCGM_FI_DEV_FB_USED', {
      start: new Date('2026-11-29T12:44:00Z'),
      end: new Date('2026-11-29T12:45:00Z'),
      step: 60,
    });
    expect(server.received[0]).toMatchObject({
      path: '/api/v1/query_range',
      params: { query: 'DCGM_FI_DEV_FB_USED', start: '1795956240', end: '1795956300', step: '60' },
    });
    expect(result).toEqual([
      {
        metric: { gpu: '0' },
        points: [
          { time: 1795956240, value: 100 },
          { time: 1795956300, value: Infinity },
        ],
      },
    ]);
  });

  it("surfaces Prometheus's recorded refusal of more than 11,000 points as bad_data", async () => {
    const recorded = loadExchanges('memory-ranges').find((e) => e.params.query === 'vector(1)')!;
    const server = await startReplayServer([recorded]);
    closers.push(() => server.close());
    const { start, end, step } = recorded.params;
    const options = { start: new Date(Number(start) * 1000), end: new Date(Number(end) * 1000), step: Number(step) };
    const err = await rejection(new PrometheusClient(server.url).rangeQuery('vector(1)', options));
    expect(err).toMatchObject({ errorType: 'bad_data', httpStatus: 400 });
    expect((err as Error).message).toContain('exceeded maximum resolution of 11,000 points per timeseries');
  });

  it('throws bad_response when the answer is not a matrix', async () => {
    const server = await serve(json(200, vector('1')));
    const options = { start: new Date(0), end: new Date(60_000), step: 60 };
    expect(await rejection(new PrometheusClient(server.url).rangeQuery('m', options))).toMatchObject({
      errorType: 'bad_response',
    });
  });
});

describe('one abort signal shared by many queries', () => {
  it('emits no MaxListenersExceededWarning when 12 queries wait to retry at once under one budget signal (a storm group, Prometheus answering 503)', async () => {
    // The first 12 answers are held until all 12 queries arrived, so that all 12 wait for their retry together.
    const held: ServerResponse[] = [];
    const answer = (res: ServerResponse) =>
      json(503, { status: 'error', errorType: 'unavailable', error: 'starting' })({} as IncomingMessage, res);
    const server = await serve((_req, res) => {
      if (held.length >= 12) return answer(res);
      held.push(res);
      if (held.length === 12) held.forEach(answer);
    });
    const client = new PrometheusClient(server.url, { queryTimeoutMs: 5000, retryDelayMs: 500 });
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    try {
      const budget = AbortSignal.timeout(60_000);
      const results = await Promise.allSettled(
        Array.from({ length: 12 }, (_, i) => client.instantQuery(`up{i="${i}"}`, { signal: budget })),
      );
      expect(results.map((r) => r.status)).toEqual(Array(12).fill('rejected'));
      expect(server.received).toHaveLength(24);
      // Node emits process warnings on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning').map((w) => w.message)).toEqual([]);
  });
});
