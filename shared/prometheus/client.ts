/**
 * A small client for the Prometheus HTTP API: instant and range queries only.
 *
 * Requests are GETs, or form-encoded POSTs when the URL would be long (rule expressions and queries
 * over many alerts can be), sent with the endpoint's credentials (see `http.ts`: per-query time-out, one
 * retry on 503 or a network error). Every failure is thrown, never swallowed: API and HTTP errors
 * as {@link PrometheusError}; a request aborted by the caller's signal rejects with its reason.
 *
 * @see https://prometheus.io/docs/prometheus/latest/querying/api/
 */
import { PrometheusError } from './error.js';
import { fastSuccess } from './fast-parse.js';
import {
  DEFAULT_MAX_RESPONSE_BYTES,
  DEFAULT_QUERY_TIMEOUT_MS,
  DEFAULT_RETRY_DELAY_MS,
  send,
  type RawAnswer,
  type TransportOptions,
} from './http.js';
import { envelopeSchema, queryDataSchema, type QueryData, type Sample, type Series } from './wire.js';
import { trimTrailing } from '../core/trim.js';
import type { Endpoint } from '../core/endpoint.js';
import { redactedExcerpt } from '../core/secret.js';

export { PrometheusError } from './error.js';
export type { Point, Sample, Series } from './wire.js';

/** Options of {@link PrometheusClient.instantQuery}. */
export interface InstantQueryOptions {
  /** Evaluation time; Prometheus uses its current time when absent. */
  time?: Date;
  /** The caller's overall budget: aborts the request and its retry. */
  signal?: AbortSignal;
}

/** Options of {@link PrometheusClient.rangeQuery}. */
export interface RangeQueryOptions {
  start: Date;
  end: Date;
  /** Resolution step, seconds; see `rangeStep` to stay under the 11,000-points limit. */
  step: number;
  signal?: AbortSignal;
}

/** A query's result plus the warnings Prometheus attached (e.g. partial data). */
export interface QueryResult<T> {
  result: T;
  warnings: string[];
}

/** Options of the {@link PrometheusClient} constructor. */
export interface ClientOptions {
  /** Time-out of each attempt of each query, milliseconds (default {@link DEFAULT_QUERY_TIMEOUT_MS}). */
  queryTimeoutMs?: number;
  /** Pause before the one retry, milliseconds (default {@link DEFAULT_RETRY_DELAY_MS}). */
  retryDelayMs?: number;
  /** Largest answer read, bytes (default {@link DEFAULT_MAX_RESPONSE_BYTES}); a longer one fails as `too_large`. */
  maxResponseBytes?: number;
}

/** Queries one Prometheus server. Holds no state besides its endpoint and options. */
export class PrometheusClient {
  readonly #endpoint: Endpoint;
  readonly #transport: TransportOptions;
  #waiting = 0;

  /**
   * @param endpoint its base URL, e.g. `http://prometheus:9090` or `https://host/prometheus` (a trailing slash is
   *   ignored), with the credentials every request carries (`PROMETHEUS_BEARER_TOKEN`…); a URL alone: none
   */
  constructor(endpoint: string | Endpoint, options: ClientOptions = {}) {
    const { url, credentials } = typeof endpoint === 'string' ? { url: endpoint, credentials: undefined } : endpoint;
    this.#endpoint = { url: trimTrailing(url, '/'), credentials };
    this.#transport = {
      queryTimeoutMs: options.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS,
      retryDelayMs: options.retryDelayMs ?? DEFAULT_RETRY_DELAY_MS,
      maxResponseBytes: options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
    };
  }

  /**
   * Evaluates `expr` at one instant (`GET` or `POST /api/v1/query`).
   * @returns one {@link Sample} per series; a scalar result is one sample with no labels
   * @throws PrometheusError on an API error (its `errorType`, `error` and `warnings`), an HTTP error,
   *   no connection or no answer in time (after the one retry where it applies), or a matrix/string result
   * @throws the signal's reason when `signal` aborts
   * @see https://prometheus.io/docs/prometheus/latest/querying/api/#instant-queries
   */
  async instantQuery(expr: string, options: InstantQueryOptions = {}): Promise<QueryResult<Sample[]>> {
    const params: Record<string, string> = { query: expr };
    if (options.time) params.time = unixSeconds(options.time);
    const { data, warnings } = await this.#request('/api/v1/query', params, options.signal);
    if (data.resultType === 'vector')
      return { result: data.result.map((s) => ({ metric: s.metric, ...s.value })), warnings };
    if (data.resultType === 'scalar') return { result: [{ metric: {}, ...data.result }], warnings };
    throw new PrometheusError(`instant query returned a ${data.resultType}, not a vector or scalar`, {
      errorType: 'bad_response',
    });
  }

  /**
   * Evaluates `expr` over a time range (`GET` or `POST /api/v1/query_range`).
   * @returns one {@link Series} per series, points in time order
   * @throws PrometheusError on an API error (e.g. `bad_data` when over 11,000 points), an HTTP error or no connection
   * @throws the signal's reason when `signal` aborts
   * @see https://prometheus.io/docs/prometheus/latest/querying/api/#range-queries
   */
  async rangeQuery(expr: string, options: RangeQueryOptions): Promise<QueryResult<Series[]>> {
    const params = {
      query: expr,
      start: unixSeconds(options.start),
      end: unixSeconds(options.end),
      step: String(options.step),
    };
    const { data, warnings } = await this.#request('/api/v1/query_range', params, options.signal);
    if (data.resultType !== 'matrix') {
      throw new PrometheusError(`range query returned a ${data.resultType}, not a matrix`, {
        errorType: 'bad_response',
      });
    }
    return { result: data.result.map((s) => ({ metric: s.metric, points: s.values })), warnings };
  }

  /**
   * Requests sent and not yet answered (a wait to retry included): whether a caller whose time ran out
   * was waiting on Prometheus, or on its own work.
   */
  get waiting(): number {
    return this.#waiting;
  }

  async #request(
    path: string,
    params: Record<string, string>,
    signal?: AbortSignal,
  ): Promise<{ data: QueryData; warnings: string[] }> {
    this.#waiting++;
    let answer: RawAnswer;
    try {
      answer = await send(this.#endpoint, { path, params, signal }, this.#transport);
    } finally {
      this.#waiting--;
    }
    return parseResponse(answer.status, answer.text);
  }
}

/** Longest part of a refusal's body quoted in its error, characters (redacted first). */
const MAX_REFUSAL_QUOTE = 120;
/** How much of a refusal's body is read for that quote, characters. */
const MAX_REFUSAL_SCAN = 4096;

/**
 * Interprets one API answer.
 * @throws PrometheusError for an error envelope, a non-2xx status, or a body that is not the API's JSON;
 *   `unauthorized` for 401 and 403 (the credentials were missing or refused: an auth proxy's page, Amazon
 *   Managed Prometheus's `{"message": …}`), its message `401 from Prometheus` and the body's gist, redacted
 */
function parseResponse(httpStatus: number, text: string): { data: QueryData; warnings: string[] } {
  if (httpStatus === 401 || httpStatus === 403) throw refused(httpStatus, text);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new PrometheusError(`HTTP ${httpStatus}: response is not JSON`, { errorType: 'bad_response', httpStatus });
  }
  const fast = httpStatus >= 200 && httpStatus <= 299 ? fastSuccess(json) : undefined;
  if (fast) return fast;
  const envelope = envelopeSchema.safeParse(json);
  if (!envelope.success) {
    throw new PrometheusError(`HTTP ${httpStatus}: response is not a Prometheus API envelope`, {
      errorType: 'bad_response',
      httpStatus,
    });
  }
  const { status, errorType, error, warnings = [] } = envelope.data;
  if (status === 'error') {
    throw new PrometheusError(error ?? `HTTP ${httpStatus}`, {
      errorType: errorType ?? 'unknown',
      httpStatus,
      warnings,
    });
  }
  if (httpStatus < 200 || httpStatus > 299) {
    throw new PrometheusError(`HTTP ${httpStatus} with a success envelope`, { errorType: 'bad_response', httpStatus });
  }
  const data = queryDataSchema.safeParse(envelope.data.data);
  if (!data.success) {
    throw new PrometheusError(`malformed query result: ${data.error.issues[0]?.message ?? 'invalid'}`, {
      errorType: 'bad_response',
      httpStatus,
    });
  }
  return { data: data.data, warnings };
}

/** A 401 or 403 as an error: the status, and what the body says (AWS's `message`, the API's `error`, or its text). */
function refused(httpStatus: number, text: string): PrometheusError {
  let said = text;
  try {
    const body = JSON.parse(text) as { message?: unknown; Message?: unknown; error?: unknown };
    const field = [body?.message, body?.Message, body?.error].find((v) => typeof v === 'string');
    if (typeof field === 'string') said = field;
  } catch {
    // a proxy's page or plain text: quoted as it is
  }
  const excerpt = redactedExcerpt(textOfPage(said.slice(0, MAX_REFUSAL_SCAN)), MAX_REFUSAL_QUOTE);
  return new PrometheusError(`${httpStatus} from Prometheus${excerpt ? `: ${excerpt}` : ''}`, {
    errorType: 'unauthorized',
    httpStatus,
  });
}

/** An HTML page's text (tags dropped, one pass), e.g. nginx's `<title>401 Authorization Required</title>…`; plain text as it is. */
function textOfPage(text: string): string {
  let out = '';
  let inTag = false;
  for (const ch of text) {
    if (ch === '<') inTag = true;
    else if (ch === '>' && inTag) {
      inTag = false;
      out += ' ';
    } else if (!inTag) out += ch;
  }
  return out;
}

/** Prometheus accepts Unix seconds with a fraction; millisecond precision is what `Date` holds. */
function unixSeconds(date: Date): string {
  return String(date.getTime() / 1000);
}
