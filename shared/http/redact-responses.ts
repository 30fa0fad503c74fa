/**
 * Keeps secrets out of every response body: the webhook's result quotes each failed channel's
 * error, and an error may quote a webhook URL without knowing it (a platform reply echoing its
 * path, an HTTP library naming the URL it could not reach). One middleware for all routes, so a
 * new route or error text cannot forget it.
 */
import type { MiddlewareHandler } from 'hono';
import { redactSecrets } from '../core/secret.js';

/** Bodies of these types are text we wrote (JSON, HTML, plain text) and are scrubbed. */
const TEXT_TYPES = /^(text\/|application\/json)/i;

/** Statuses whose responses carry no body (nothing to scrub, and a new body would be refused). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/** Middleware replacing every registered secret form in a text response with `<redacted>` ({@link redactSecrets}). */
export function redactResponses(): MiddlewareHandler {
  return async (c, next) => {
    await next();
    const { status, statusText } = c.res;
    if (NULL_BODY_STATUSES.has(status) || !TEXT_TYPES.test(c.res.headers.get('content-type') ?? '')) return;
    // Read, not cloned: a clone tees the body stream and makes @hono/node-server send the response
    // through that stream, 0.5 ms of CPU per webhook answer (a duplicate group's floor is ~5 ms).
    // The body is then always answered anew, as the (lightweight) string response it was.
    const headers = new Headers(c.res.headers);
    const body = await c.res.text();
    const clean = redactSecrets(body);
    if (clean !== body) headers.delete('content-length');
    // Unset first: assigning over a response copies the old headers back, content-length included.
    c.res = undefined;
    c.res = new Response(clean, { status, statusText, headers });
  };
}
