/**
 * A small client for the Prometheus HTTP API: instant and range queries only.
 *
 * Requests are form-encoded POSTs (rule expressions can be longer than a URL allows), sent with the
 * global `fetch`. Every failure is thrown, never swallowed: API and HTTP errors as
 * {@link PrometheusError}; an aborted request rejects with the signal's own reason.
 *
 * @see https://prometheus.io/docs/prometheus/latest/querying/api/
 */
import { envelopeSchema, queryDataSchema, type QueryData, type Sample, type Series } from './wire.js';

export type { Point, Sample, Series } from './wire.js';

/**
 * A failed query.
 * `errorType` is Prometheus's own (`bad_data`, `execution`, `timeout`, `canceled`, `internal`,
 * `unavailable`, `not_found`), or one of ours: `network` (no HTTP answer: refused, reset, DNS),
 * `bad_response` (the body is not the API's JSON envelope, or not the expected result type).
 * `httpStatus` is set whenever an HTTP answer arrived.
 */
export class PrometheusError extends Error {
  readonly errorType: string;
  readonly httpStatus?: number;
  constructor(message: string, options: { errorType: string; httpStatus?: number; cause?: unknown }) {
    super(message, { cause: options.cause });
    this.name = 'PrometheusError';
    this.errorType = options.errorType;
    this.httpStatus = options.httpStatus;
  }
}

/** Options of {@link PrometheusClient.instantQuery}. */
export interface InstantQueryOptions {
  /** Evaluation time; Prometheus uses its current time when absent. */
  time?: Date;
  /** Aborts the request (use `AbortSignal.timeout(ms)` for a per-request timeout). */
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

/** Queries one Prometheus server. Holds no state besides its base URL. */
export class PrometheusClient {
  readonly #baseUrl: string;

  /** @param baseUrl e.g. `http://prometheus:9090` or `https://host/prometheus` (a trailing slash is ignored) */
  constructor(baseUrl: string) {
    this.#baseUrl = baseUrl.replace(/\/+$/, '');
  }

  /**
   * Evaluates `expr` at one instant (`POST /api/v1/query`).
   * @returns one {@link Sample} per series; a scalar result is one sample with no labels
   * @throws PrometheusError on an API error, an HTTP error, no connection, or a matrix/string result
   * @throws the signal's reason when `signal` aborts
   * @see https://prometheus.io/docs/prometheus/latest/querying/api/#instant-queries
   */
  async instantQuery(expr: string, options: InstantQueryOptions = {}): Promise<QueryResult<Sample[]>> {
    const params: Record<string, string> = { query: expr };
    if (options.time) params.time = unixSeconds(options.time);
    const { data, warnings } = await this.#post('/api/v1/query', params, options.signal);
    if (data.resultType === 'vector') return { result: data.result.map((s) => ({ metric: s.metric, ...s.value })), warnings };
    if (data.resultType === 'scalar') return { result: [{ metric: {}, ...data.result }], warnings };
    throw new PrometheusError(`instant query returned a ${data.resultType}, not a vector or scalar`, { errorType: 'bad_response' });
  }

  /**
   * Evaluates `expr` over a time range (`POST /api/v1/query_range`).
   * @returns one {@link Series} per series, points in time order
   * @throws PrometheusError on an API error (e.g. `bad_data` when over 11,000 points), an HTTP error or no connection
   * @throws the signal's reason when `signal` aborts
   * @see https://prometheus.io/docs/prometheus/latest/querying/api/#range-queries
   */
  async rangeQuery(expr: string, options: RangeQueryOptions): Promise<QueryResult<Series[]>> {
    const params = { query: expr, start: unixSeconds(options.start), end: unixSeconds(options.end), step: String(options.step) };
    const { data, warnings } = await this.#post('/api/v1/query_range', params, options.signal);
    if (data.resultType !== 'matrix') {
      throw new PrometheusError(`range query returned a ${data.resultType}, not a matrix`, { errorType: 'bad_response' });
    }
    return { result: data.result.map((s) => ({ metric: s.metric, points: s.values })), warnings };
  }

  async #post(path: string, params: Record<string, string>, signal?: AbortSignal): Promise<{ data: QueryData; warnings: string[] }> {
    let response: Response;
    let text: string;
    try {
      response = await fetch(this.#baseUrl + path, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: new URLSearchParams(params),
        signal,
      });
      text = await response.text();
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      throw new PrometheusError(`Prometheus unreachable (${networkErrorCode(err)})`, { errorType: 'network', cause: err });
    }
    return parseResponse(response.status, text);
  }
}

/**
 * Interprets one API answer.
 * @throws PrometheusError for an error envelope, a non-2xx status, or a body that is not the API's JSON
 */
function parseResponse(httpStatus: number, text: string): { data: QueryData; warnings: string[] } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new PrometheusError(`HTTP ${httpStatus}: response is not JSON`, { errorType: 'bad_response', httpStatus });
  }
  const envelope = envelopeSchema.safeParse(json);
  if (!envelope.success) {
    throw new PrometheusError(`HTTP ${httpStatus}: response is not a Prometheus API envelope`, { errorType: 'bad_response', httpStatus });
  }
  const { status, errorType, error, warnings = [] } = envelope.data;
  if (status === 'error') {
    throw new PrometheusError(error ?? `HTTP ${httpStatus}`, { errorType: errorType ?? 'unknown', httpStatus });
  }
  if (httpStatus < 200 || httpStatus > 299) {
    throw new PrometheusError(`HTTP ${httpStatus} with a success envelope`, { errorType: 'bad_response', httpStatus });
  }
  const data = queryDataSchema.safeParse(envelope.data.data);
  if (!data.success) {
    throw new PrometheusError(`malformed query result: ${data.error.issues[0]?.message ?? 'invalid'}`, { errorType: 'bad_response', httpStatus });
  }
  return { data: data.data, warnings };
}

/** Prometheus accepts Unix seconds with a fraction; millisecond precision is what `Date` holds. */
function unixSeconds(date: Date): string {
  return String(date.getTime() / 1000);
}

/** Node's `fetch failed` hides the reason in `cause.code` (e.g. `ECONNREFUSED`). */
function networkErrorCode(err: unknown): string {
  const cause = (err as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  if (typeof cause?.code === 'string') return cause.code;
  if (typeof cause?.message === 'string') return cause.message;
  return err instanceof Error ? err.message : String(err);
}
