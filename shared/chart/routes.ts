/**
 * `GET /v1/chart/<token>.png`: an alert's chart, read from Prometheus and drawn at the moment of the
 * request. The token (`token.ts`) is the capability: signed with the acknowledgement keys, expiring
 * with the message's links. The GET changes nothing (Slack's and mail scanners' fetches are harmless).
 *
 * Answers: 200 `image/png` (private cache for a minute: the chart runs to "now"); a bad token 400,
 * forged 403, expired or retired 410, as a small HTML page naming only the problem; Prometheus
 * unreachable or failing: 503 with a PNG saying so (an `<img>` shows it; `Retry-After`), never a crash;
 * the renderer unavailable: 503 text; more than `maxConcurrent` distinct charts being drawn: 503 text with
 * `Retry-After`. A chart is drawn once for every request that asks for it while it is drawn or within its
 * minute (`answers.ts`). Refusals are never cached; a 503 PNG is kept for its `Retry-After`.
 */
import { Hono, type Context } from 'hono';
import { h } from '../core/html.js';
import type { Logger } from '../core/logger.js';
import { PrometheusError, type PrometheusClient, type Series } from '../prometheus/client.js';
import { chartData, chartWindow, type ChartWindow } from './data.js';
import { BUSY, ChartAnswers, type Drawn } from './answers.js';
import type { ChartRenderer } from './load.js';
import { TOKEN_PROBLEM_STATUS, type SigningKeys } from '../core/signed-token.js';
import { ChartTokenError, verifyChartToken } from './token.js';
import { CHART_SUFFIX } from './url.js';
import { chartWords, type FailureCause } from './words.js';

/** How long a browser may reuse a chart, seconds. */
export const CHART_MAX_AGE_SECONDS = 60;
/** `Retry-After` when Prometheus failed, seconds. */
const RETRY_AFTER_SECONDS = 30;
/** `Retry-After` when too many charts are being drawn, seconds. */
const BUSY_RETRY_AFTER_SECONDS = 5;
/**
 * Default most charts drawn at once per process. Each holds a range query's answer and a render
 * (tens of MB at the answer cap); a burst of link previews beyond this is answered 503 at once
 * instead of growing the process until it dies.
 */
export const DEFAULT_MAX_CONCURRENT_CHARTS = 4;
/**
 * Most series a chart's range query may answer with. A chart draws one alert's series; an answer of
 * more (an expression the alert's labels do not narrow) is refused as too large, like one over the
 * client's byte cap, before anything is drawn from it.
 */
export const MAX_CHART_SERIES = 100;

export interface ChartRouteDeps {
  keys: SigningKeys;
  /** The Prometheus of `PROMETHEUS_URL` (only range queries are sent). */
  prometheus: Pick<PrometheusClient, 'rangeQuery'>;
  /** Loads the renderer lazily (`loadRenderer` of `load.ts`). */
  renderer(): Promise<ChartRenderer>;
  /** Budget for the range query, its retry included, milliseconds. */
  timeoutMs: number;
  logger: Logger;
  /** Epoch milliseconds. */
  now(): number;
  /**
   * Most distinct charts drawn at once (default {@link DEFAULT_MAX_CONCURRENT_CHARTS}); more answer 503 with
   * `Retry-After`. Requests for a chart being drawn await that drawing and are not counted.
   */
  maxConcurrent?: number;
}

const COMMON_HEADERS = {
  'x-robots-tag': 'noindex, nofollow',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};
const NO_STORE = { ...COMMON_HEADERS, 'cache-control': 'no-store' };

/** Builds the sub-app for `CHART_PATH`. */
export function chartRoutes(deps: ChartRouteDeps): Hono {
  const app = new Hono();
  const answers = new ChartAnswers(deps.maxConcurrent ?? DEFAULT_MAX_CONCURRENT_CHARTS, deps.now);
  app.get('/:file', async (c) => {
    // The token first: a bad link is answered at once, whatever is being drawn (it draws nothing).
    let verified: VerifiedChart;
    try {
      const checked = verify(c, deps);
      if (checked instanceof Response) return checked;
      verified = checked;
    } catch (err) {
      deps.logger.error('chart failed', { error: err as Error });
      return c.text('The chart could not be drawn. Reload in a moment.', 503, NO_STORE);
    }
    const answer = answers.answer(chartKey(verified.spec), () => draw(deps, verified));
    if (answer === BUSY) {
      deps.logger.warn('chart refused: too many drawn at once', { limit: answers.limit });
      return c.text('Too many charts are being drawn. Reload in a moment.', 503, {
        ...NO_STORE,
        'retry-after': String(BUSY_RETRY_AFTER_SECONDS),
      });
    }
    try {
      const drawn = await answer;
      return c.body(drawn.png as Uint8Array<ArrayBuffer>, drawn.status, drawn.headers);
    } catch (err) {
      deps.logger.error('chart failed', { error: err as Error });
      return c.text('The chart could not be drawn. Reload in a moment.', 503, NO_STORE);
    }
  });
  // Any other method (a POST from a mistyped receiver URL, a scanner) is no webhook request: 405,
  // answered here so the app's not-found handler never logs the path, which holds the token.
  app.all('*', (c) =>
    c.text('Method not allowed: a chart is only read (GET).', 405, { ...NO_STORE, allow: 'GET, HEAD' }),
  );
  return app;
}

type VerifiedChart = ReturnType<typeof verifyChartToken>;

/**
 * The link's verified token, or the refusal to answer (400/403/410 by the token's problem).
 * @throws anything but a token problem (the caller answers 503)
 */
function verify(c: Context, deps: ChartRouteDeps): VerifiedChart | Response {
  const file = c.req.param('file') ?? '';
  try {
    if (!file.endsWith(CHART_SUFFIX)) throw new ChartTokenError('malformed', 'This is not a chart link.');
    return verifyChartToken(file.slice(0, -CHART_SUFFIX.length), deps.keys, deps.now());
  } catch (err) {
    if (!(err instanceof ChartTokenError)) throw err;
    deps.logger.warn('chart link refused', { problem: err.problem });
    return c.html(problemPage(err.message), TOKEN_PROBLEM_STATUS[err.problem], {
      ...NO_STORE,
      'content-security-policy': "default-src 'none'",
    });
  }
}

/**
 * Reads the verified chart's series from Prometheus and draws it (200 PNG, or a 503 PNG naming the cause),
 * its words in the token's language.
 */
async function draw(deps: ChartRouteDeps, verified: VerifiedChart): Promise<Drawn> {
  const renderer = await deps.renderer();
  const window = chartWindow(verified.spec, deps.now() / 1000);
  const series = await readSeries(deps, verified.spec.query, window);
  if (series instanceof Error) {
    const cause = failureCause(series);
    deps.logger.warn('chart query failed', { cause, error: series.message });
    const words = chartWords(verified.locale);
    const png = await renderer.renderMessagePng(words.unavailable, words.failure[cause]);
    return {
      status: 503,
      png,
      headers: { ...NO_STORE, 'content-type': 'image/png', 'retry-after': String(RETRY_AFTER_SECONDS) },
      keepSeconds: RETRY_AFTER_SECONDS,
    };
  }
  const png = await renderer.renderChartPng({ ...chartData(verified.spec, series, window), locale: verified.locale });
  return {
    status: 200,
    png,
    headers: {
      ...COMMON_HEADERS,
      'content-type': 'image/png',
      'cache-control': `private, max-age=${CHART_MAX_AGE_SECONDS}`,
    },
    keepSeconds: CHART_MAX_AGE_SECONDS,
  };
}

/**
 * What a chart token means, as a cache key: everything of its spec that decides the drawing (the alert's
 * labels, the query, the fire time that places the range, title, unit, threshold, memory fit), in a fixed
 * order; not its expiry.
 */
function chartKey(spec: VerifiedChart['spec']): string {
  const labels = Object.entries(spec.labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const { query, title, unit, firedAt, threshold, memory } = spec;
  return JSON.stringify([query, labels, firedAt, title, unit, threshold ?? null, memory ?? null]);
}

/** The range query's series, or the error that kept them (no connection, time-out, an error answer). */
async function readSeries(deps: ChartRouteDeps, query: string, window: ChartWindow): Promise<Series[] | Error> {
  try {
    const signal = AbortSignal.timeout(deps.timeoutMs);
    const { result } = await deps.prometheus.rangeQuery(query, {
      start: new Date(window.start * 1000),
      end: new Date(window.end * 1000),
      step: window.step,
      signal,
    });
    if (result.length <= MAX_CHART_SERIES) return result;
    return new PrometheusError(`${result.length} series answered, a chart draws at most ${MAX_CHART_SERIES}`, {
      errorType: 'too_large',
    });
  } catch (err) {
    return err instanceof Error ? err : new Error(String(err));
  }
}

/** Why the range query failed: our budget (`TimeoutError`) or the client's `PrometheusError` type. */
function failureCause(err: Error): FailureCause {
  if (err.name === 'TimeoutError') return 'timeout';
  if (!(err instanceof PrometheusError)) return 'unreachable';
  if (err.errorType === 'timeout') return 'timeout';
  if (err.errorType === 'network') return 'unreachable';
  if (err.errorType === 'too_large') return 'too_large';
  return err.httpStatus === 503 ? 'unavailable' : 'refused';
}

/** A refusal: a heading and the token problem's one sentence (which never echoes the token), escaped. */
function problemPage(message: string): string {
  return h`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="robots" content="noindex,nofollow"><title>Chart link not valid</title></head><body><h1>Chart link not valid</h1><p>${message}</p></body></html>`.toString();
}
