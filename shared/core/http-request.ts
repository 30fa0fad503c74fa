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
  method: 'GET' | 'POST';
  headers?: Record<string, string>;
  /** Sent as UTF-8 with its `content-length`. */
  body?: string;
  /** Aborts the request, or the reading of its body; the promise then rejects with an `AbortError`. */
  signal?: AbortSignal;
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
    const headers = init.body === undefined ? init.headers : { ...init.headers, 'content-length': String(Buffer.byteLength(init.body)) };
    const req = (target.protocol === 'https:' ? tlsRequest : plainRequest)(target, { method: init.method, headers, signal: init.signal });
    req.once('response', (res) => resolve(answer(res)));
    // `on`, not `once`: the socket may fail again while the body is read (a second 'error' with no
    // listener would crash the process); once settled, a rejection is a no-op.
    req.on('error', reject);
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
      if (!res.complete) reject(Object.assign(new Error('connection closed before the answer ended'), { code: 'ECONNRESET' }));
    });
  });
}
