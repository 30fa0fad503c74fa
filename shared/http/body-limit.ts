/**
 * The webhook's body limit: hono's `bodyLimit`, answered from `Content-Length` without touching the
 * request's body stream when the request gives that length (and no `Transfer-Encoding`).
 *
 * Why not `bodyLimit` alone: its first step reads `c.req.raw.body` to see whether there is a body.
 * On `npm start` (@hono/node-server) that getter builds the whole web `Request` and a stream over the
 * socket, which the server otherwise skips: `c.req.text()` then reads the socket's bytes directly.
 * For a request with a length, `bodyLimit`'s answer is that header's value against the limit (Node's
 * HTTP parser then holds the body to exactly that many bytes), so this gives the same answer
 * without the stream; any other request (chunked, no length, or no body: GET, HEAD) goes to
 * `bodyLimit` itself.
 * @see https://hono.dev/docs/middleware/builtin/body-limit
 */
import type { Context, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';

/**
 * @param options.maxSize largest body accepted, bytes
 * @param options.onError the answer to a larger body (as `bodyLimit`'s)
 */
export function bodyLimitByLength(options: { maxSize: number; onError: (c: Context) => Response | Promise<Response> }): MiddlewareHandler {
  const streamed = bodyLimit(options);
  return async (c, next) => {
    const length = c.req.header('content-length');
    if (length === undefined || c.req.header('transfer-encoding') !== undefined || c.req.method === 'GET' || c.req.method === 'HEAD') return streamed(c, next);
    return Number.parseInt(length, 10) > options.maxSize ? options.onError(c) : next();
  };
}
