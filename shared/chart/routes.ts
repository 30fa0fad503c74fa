/**
 * `GET /v1/chart/<token>.png`: an alert's chart, read from Prometheus and drawn at the moment of the
 * request. The token (`token.ts`) is the capability: signed with the acknowledgement keys, expiring
 * with the message's links. The GET changes nothing (Slack's and mail scanners' fetches are harmless).
 *
 * Answers: 200 `image/png` (private cache for a minute: the chart runs to "now"); a bad token 400,
 * forged 403, expired or retired 410, as a small HTML page naming only the problem; Prometheus
 * unreachable or failing: 503 with a PNG saying so (an `<img>` shows it; `Retry-After`), never a crash;
 * the renderer unavailable: 503 text; more than `maxConcurrent` charts being drawn: 503 text with
 * `Retry-After`. Refusals and failures are never cached.
 */
import { Hono, type Context } from 'hono';
import { h } from '../core/html.js';
import type { Logger } from '../core/logger.js';
import { PrometheusError, type PrometheusClient, type Series } from '../prometheus/client.js';
import { chartData, chartWindow, type ChartWindow } from './data.js';
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
  /** Most charts drawn at once (default {@link DEFAULT_MAX_CONCURRENT_CHARTS}); more answer 503 with `Retry-After`. */
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
  const limit = deps.maxConcurrent ?? DEFAULT_MAX_CONCURRENT_CHARTS;
  let drawing = 0;
  const answers = new AnswerCache(CACHED_CHARTS);
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
    if (drawing >= limit) {
      deps.logger.warn('chart refused: too many drawn at once', { limit });
      return c.text('Too many charts are being drawn. Reload in a moment.', 503, {
        ...NO_STORE,
        'retry-after': String(BUSY_RETRY_AFTER_SECONDS),
      });
    }
    const key = chartKey(verified.spec);
    const cached = answers.get(key, deps.now());
    if (cached) return c.body(cached.png as Uint8Array<ArrayBuffer>, cached.status, cached.headers);
    drawing++;
    try {
      const drawn = await draw(deps, verified);
      answers.set(key, drawn, deps.now() + (drawn.status === 200 ? CHART_MAX_AGE_SECONDS : RETRY_AFTER_SECONDS) * 1000);
      return c.body(drawn.png as Uint8Array<ArrayBuffer>, drawn.status, drawn.headers);
    } catch (err) {
      deps.logger.error('chart failed', { error: err as Error });
      return c.text('The chart could not be drawn. Reload in a moment.', 503, NO_STORE);
    } finally {
      drawing--;
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

/** A drawn answer: 200 with the chart, or 503 with a PNG naming the cause. */
interface Drawn {
  status: 200 | 503;
  png: Uint8Array;
  headers: Record<string, string>;
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
  };
}

/**
 * Charts drawn lately, by what their link means ({@link chartKey}: the alert, the query, the range),
 * never by the token's text: each page view and each message signs the same chart anew (another
 * expiry, another token). Each is kept as long as its answer says (a minute; a failure for its
 * `Retry-After`): a link re-opened, unfurled, fetched by a mail scanner or minted again within that time
 * costs no query. A chart link lets anyone who holds it ask Prometheus for the alert's series for days,
 * so this bounds the rate per chart, as {@link DEFAULT_MAX_CONCURRENT_CHARTS} bounds the concurrency.
 */
export const CACHED_CHARTS = 64;
/** Most bytes of PNG the cache holds (a chart is tens of KB): beyond it, the oldest are dropped. */
const CACHED_CHART_BYTES = 8 * 1024 * 1024;

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

/** At most `max` answers and {@link CACHED_CHART_BYTES}, the oldest dropped first. */
class AnswerCache {
  readonly #entries = new Map<string, Drawn & { untilMs: number }>();
  #bytes = 0;
  constructor(readonly max: number) {}

  get(key: string, nowMs: number): Drawn | undefined {
    const entry = this.#entries.get(key);
    if (entry && entry.untilMs > nowMs) return entry;
    if (entry) this.#delete(key);
    return undefined;
  }

  set(key: string, drawn: Drawn, untilMs: number): void {
    this.#delete(key);
    this.#entries.set(key, { ...drawn, untilMs });
    this.#bytes += drawn.png.byteLength;
    while (this.#entries.size > this.max || this.#bytes > CACHED_CHART_BYTES)
      this.#delete(this.#entries.keys().next().value!);
  }

  #delete(key: string): void {
    const entry = this.#entries.get(key);
    if (!entry) return;
    this.#bytes -= entry.png.byteLength;
    this.#entries.delete(key);
  }
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
