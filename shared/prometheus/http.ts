/**
 * One Prometheus API request on the wire: GET when the URL is short, form-encoded POST when it is
 * long; a time-out per attempt under the caller's overall signal; one retry on HTTP 503 or a
 * network error. Redirects are not followed (a 3xx is an error): a client that follows them would
 * send its queries wherever a misconfigured or hostile server points. Sent with `node:http`, not
 * `fetch` (`core/http-request.ts` says why), with the credentials `PROMETHEUS_*` configure
 * (`core/endpoint.ts`), signed anew for each attempt. Parsing the answer is the caller's business.
 * @see https://prometheus.io/docs/prometheus/latest/querying/api/#instant-queries (GET and POST)
 */
import pRetry from 'p-retry';
import { endpointRequest, SigningError, type Endpoint } from '../core/endpoint.js';
import { BodyTooLargeError, networkErrorCode, type HttpAnswer } from '../core/http-request.js';
import { PrometheusError } from './error.js';
import { formEncode } from './form.js';

/**
 * Longest URL sent as GET, characters. Prometheus itself accepts much longer, but proxies in front
 * of it often do not (nginx's default header buffer is 8 KiB, some load balancers stop near 2 KiB);
 * longer requests go as a form-encoded POST body, which the API accepts for every query endpoint.
 */
export const MAX_GET_URL_CHARS = 2000;

/** Default time-out of one attempt, milliseconds. */
export const DEFAULT_QUERY_TIMEOUT_MS = 10_000;

/** Pause before the one retry, milliseconds (Prometheus answers 503 while starting or overloaded). */
export const DEFAULT_RETRY_DELAY_MS = 100;

/**
 * Default largest answer read, bytes. A query over a whole fleet's series answers tens of MB (3,001
 * series over a chart window: 17 MB of JSON, several times that once parsed); beyond this the body
 * is not read on, and the query fails as `too_large`.
 */
export const DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024;

export interface TransportOptions {
  /** Largest body read, bytes (UTF-8 as sent); a longer one fails the query as `too_large`, not retried. */
  maxResponseBytes: number;
  /** Time-out of each attempt, milliseconds; also sent to Prometheus as its `timeout` parameter. */
  queryTimeoutMs: number;
  /** Pause before the retry, milliseconds. */
  retryDelayMs: number;
}

/** An answer that arrived: its HTTP status and body text. */
export interface RawAnswer {
  status: number;
  text: string;
}

/** One API call: its path (e.g. `/api/v1/query`), its query parameters and the caller's overall budget. */
export interface ApiCall {
  path: string;
  params: Record<string, string>;
  /** Aborting it stops everything, with no retry. */
  signal?: AbortSignal;
}

/**
 * Sends one API request, retrying once when Prometheus answered 503 or there was no answer.
 * @param endpoint Prometheus's base URL and credentials
 * @param call the path and parameters (a `timeout` equal to the attempt's time-out is added), and the budget
 * @returns the last attempt's answer when it is not a 503 (any other status is the caller's to read)
 * @throws PrometheusError `network` (no answer, or one cut off before its end), `timeout` (the attempt's time-out fired), `redirect`
 *   (any 3xx: not followed, not retried), `too_large` (a body over `maxResponseBytes`: not retried), `credentials` (SigV4
 *   found no AWS credentials: nothing sent, not retried), or the 503 answer itself as `unavailable` after the retry
 * @throws the signal's reason when `call.signal` aborts
 */
export function send(endpoint: Endpoint, call: ApiCall, options: TransportOptions): Promise<RawAnswer> {
  const params = { ...call.params, timeout: `${Math.max(1, Math.round(options.queryTimeoutMs))}ms` };
  // One caller's signal is the budget of a whole enrichment (every query of a storm group): p-retry adds an
  // abort listener to the signal it gets while it waits to retry, so a shared signal would collect one per
  // query and Node would warn of a leak past 10. A signal of this request only (`AbortSignal.any` follows
  // its source without a listener on it) keeps one listener per request.
  const request = call.signal && AbortSignal.any([call.signal]);
  return pRetry(() => attempt(endpoint, { ...call, params }, options), {
    retries: 1,
    minTimeout: options.retryDelayMs,
    randomize: false,
    signal: request,
    shouldRetry: ({ error }) =>
      error instanceof PrometheusError && (error.errorType === 'network' || error.httpStatus === 503),
  });
}

/** One attempt under its own time-out; its failures classified by {@link failure}. */
async function attempt(endpoint: Endpoint, call: ApiCall, options: TransportOptions): Promise<RawAnswer> {
  const timeout = AbortSignal.timeout(options.queryTimeoutMs);
  // Set once the status line arrived: a connection lost after it cut an answer, it did not fail to reach Prometheus.
  let answered: number | undefined;
  try {
    const response = await request(endpoint, call, call.signal ? AbortSignal.any([call.signal, timeout]) : timeout);
    answered = response.status;
    const text = await readText(response, options.maxResponseBytes);
    if (response.status === 503) throw unavailable(text);
    if (response.status >= 300 && response.status < 400) throw redirected(response.status);
    return { status: response.status, text };
  } catch (err) {
    throw failure(err, { signal: call.signal, timeout, timeoutMs: options.queryTimeoutMs, answered });
  }
}

/** The request on the wire: GET when its URL fits {@link MAX_GET_URL_CHARS}, else a form-encoded POST. */
function request(endpoint: Endpoint, call: ApiCall, signal: AbortSignal): Promise<HttpAnswer> {
  // Encoded once: a batch's query runs to tens of KB.
  const form = formEncode(call.params);
  if (endpoint.url.length + call.path.length + 1 + form.length <= MAX_GET_URL_CHARS)
    return endpointRequest(endpoint, `${call.path}?${form}`, {
      method: 'GET',
      headers: { accept: 'application/json' },
      signal,
    });
  return endpointRequest(endpoint, call.path, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: form,
    signal,
  });
}

/**
 * What a failed attempt throws: a `PrometheusError` as it is, the caller's abort reason, else the
 * error that says what happened (no credentials, the attempt's time-out, an answer cut off, no answer).
 */
function failure(
  err: unknown,
  at: { signal?: AbortSignal; timeout: AbortSignal; timeoutMs: number; answered?: number },
): unknown {
  if (err instanceof PrometheusError) return err;
  if (at.signal?.aborted) return at.signal.reason;
  if (err instanceof SigningError)
    return new PrometheusError(`PROMETHEUS_SIGV4_REGION: ${err.message}`, { errorType: 'credentials', cause: err });
  if (at.timeout.aborted)
    return new PrometheusError(`no answer within ${at.timeoutMs} ms`, { errorType: 'timeout', cause: err });
  if (at.answered !== undefined)
    return new PrometheusError(
      `Prometheus answered HTTP ${at.answered}, but the connection dropped before the answer ended (${networkErrorCode(err)})`,
      { errorType: 'network', cause: err },
    );
  return new PrometheusError(`Prometheus unreachable (${networkErrorCode(err)})`, { errorType: 'network', cause: err });
}

/**
 * The body as text, read only up to `maxBytes`: a `content-length` over it fails before reading, a
 * longer stream is cut as soon as it passes it.
 * @throws PrometheusError `too_large`
 */
async function readText(response: HttpAnswer, maxBytes: number): Promise<string> {
  try {
    return await response.text(maxBytes);
  } catch (err) {
    if (!(err instanceof BodyTooLargeError)) throw err;
    throw new PrometheusError(`HTTP ${response.status}: ${err.message}`, {
      errorType: 'too_large',
      httpStatus: response.status,
    });
  }
}

/** A 503 as an error; the API's own `errorType`/`error` are kept when the body is its envelope. */
function unavailable(text: string): PrometheusError {
  let body: { errorType?: unknown; error?: unknown } = {};
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    // a proxy's page: keep the generic message
  }
  const errorType = typeof body?.errorType === 'string' ? body.errorType : 'unavailable';
  const message = typeof body?.error === 'string' ? body.error : 'HTTP 503: Prometheus unavailable';
  return new PrometheusError(message, { errorType, httpStatus: 503 });
}

function redirected(status: number): PrometheusError {
  return new PrometheusError(
    `HTTP ${status}: Prometheus answered with a redirect, which is not followed; set PROMETHEUS_URL to the final URL`,
    { errorType: 'redirect', httpStatus: status },
  );
}
