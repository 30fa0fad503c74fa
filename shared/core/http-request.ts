/**
 * One outbound HTTP request with Node's own client (`node:http`/`node:https`, their global agents:
 * keep-alive, connections reused), for the few calls every alert group makes (Prometheus queries,
 * Slack and Feishu webhooks). Redirects are never followed: a 3xx is returned like any answer.
 *
 * Why not the global `fetch`: on the floor benchmark's loopback (bench/floor.ts) a `fetch` cost
 * 1.7 ms of CPU and 5.6 ms of wall time per request under the machine's load, `node:http` 0.6 ms
 * and 1.5 ms (both ends counted): WHATWG streams, `Request`/`Response` objects and undici's
 * per-request bookkeeping, paid on every query and every message. Nothing here is more than
 * what `node:http` already does; the helpers only read the body with a size limit.
 * @see https://nodejs.org/api/http.html#httprequesturl-options-callback
 */
import { request as plainRequest, type IncomingMessage } from 'node:http';
import { request as tlsRequest } from 'node:https';

/** The body of an answer was longer than the reader's limit; reading stopped there. */
export class BodyTooLargeError extends Error {
  constructor(maxBytes: number) {
    super(`answer larger than ${maxBytes} bytes; not read`);
    this.name = 'BodyTooLargeError';
  }
}

export interface HttpRequestInit {
  method: 'GET' | 'POST' | 'PATCH';
  headers?: Record<string, string>;
  /** Sent as UTF-8 with its `content-length`. */
  body?: string;
  /** Aborts the request, or the reading of its body; the promise then rejects with an `AbortError`. */
  signal?: AbortSignal;
}

/** Errors of requests that failed after their whole body had been handed to the connection. */
const afterBodySent = new WeakSet<object>();

/**
 * Whether `err`, thrown by {@link httpRequest}, came after the request's whole body had been written to
 * the connection: the server may have acted on it (an answer that is late, not absent). False for any
 * other error, and for an error before the body was sent (a refused connection, a DNS failure).
 */
export function failedAfterBodySent(err: unknown): boolean {
  return typeof err === 'object' && err !== null && afterBodySent.has(err);
}

/** An answer whose status line and headers arrived; the body is read (or dropped) by the caller. */
export interface HttpAnswer {
  status: number;
  /** A header's value (several joined with `, `), `undefined` when absent. Case-insensitive. */
  header(name: string): string | undefined;
  /**
   * The body as UTF-8 text.
   * @param maxBytes longest body read, bytes as received; a `content-length` over it fails before reading
   * @throws BodyTooLargeError past `maxBytes` (the connection is then closed)
   * @throws the connection's error when it drops before the body ends (`code` `ECONNRESET`), an
   *   `AbortError` when the request's signal aborts
   */
  text(maxBytes?: number): Promise<string>;
  /** Drops the body unread (the connection is closed rather than drained). */
  discard(): void;
}

/**
 * Sends one request and resolves when the answer's headers arrived.
 * @throws Node's network error (`code`: `ECONNREFUSED`, `ENOTFOUND`, `ECONNRESET`…; an
 *   `AggregateError` with one per address tried), an `AbortError` when `signal` aborts, a
 *   `TypeError` for a URL that does not parse (`ERR_INVALID_URL`) or is not http(s) (`ERR_INVALID_PROTOCOL`)
 */
export function httpRequest(url: string | URL, init: HttpRequestInit): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const target = typeof url === 'string' ? new URL(url) : url;
    const headers =
      init.body === undefined
        ? init.headers
        : { ...init.headers, 'content-length': String(Buffer.byteLength(init.body)) };
    const req = (target.protocol === 'https:' ? tlsRequest : plainRequest)(target, {
      method: init.method,
      headers,
      signal: init.signal,
    });
    let bodySent = false;
    req.once('finish', () => (bodySent = true));
    req.once('response', (res) => resolve(answer(res)));
    // `on`, not `once`: the socket may fail again while the body is read (a second 'error' with no
    // listener would crash the process); once settled, a rejection is a no-op.
    req.on('error', (err) => {
      if (bodySent && typeof err === 'object' && err !== null) afterBodySent.add(err);
      reject(err);
    });
    req.end(init.body);
  });
}

function answer(res: IncomingMessage): HttpAnswer {
  return {
    status: res.statusCode ?? 0,
    header: (name) => {
      const value = res.headers[name.toLowerCase()];
      return Array.isArray(value) ? value.join(', ') : value;
    },
    text: (maxBytes = Number.POSITIVE_INFINITY) => readText(res, maxBytes),
    discard: () => res.destroy(),
  };
}

function readText(res: IncomingMessage, maxBytes: number): Promise<string> {
  return new Promise((resolve, reject) => {
    if (Number(res.headers['content-length'] ?? 0) > maxBytes) {
      res.destroy();
      reject(new BodyTooLargeError(maxBytes));
      return;
    }
    const chunks: Buffer[] = [];
    let total = 0;
    res.on('data', (chunk: Buffer) => {
      total += chunk.byteLength;
      if (total > maxBytes) {
        res.destroy();
        reject(new BodyTooLargeError(maxBytes));
      } else chunks.push(chunk);
    });
    res.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('error', reject);
    // Closed before its end without an error of its own (the peer dropped the connection).
    res.once('close', () => {
      if (!res.complete)
        reject(Object.assign(new Error('connection closed before the answer ended'), { code: 'ECONNRESET' }));
    });
  });
}

/**
 * Node's network error code of a failed request (e.g. `ECONNREFUSED`), one per address tried when there
 * were several (`ECONNREFUSED, ENETUNREACH`); an error without one gives its message.
 */
export function networkErrorCode(err: unknown): string {
  const e = err as { code?: unknown; errors?: { code?: unknown }[] } | null;
  if (typeof e?.code === 'string') return e.code;
  const codes = [...new Set((e?.errors ?? []).map((x) => x?.code).filter((c): c is string => typeof c === 'string'))];
  if (codes.length) return codes.join(', ');
  return err instanceof Error ? err.message : String(err);
}
