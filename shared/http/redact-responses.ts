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

/** Middleware replacing every registered secret form in a text response with `<redacted>` ({@link redactSecrets}). */
export function redactResponses(): MiddlewareHandler {
  return async (c, next) => {
    await next();
    if (!TEXT_TYPES.test(c.res.headers.get('content-type') ?? '')) return;
    const body = await c.res.clone().text();
    const clean = redactSecrets(body);
    if (clean === body) return;
    const headers = new Headers(c.res.headers);
    headers.delete('content-length');
    const { status, statusText } = c.res;
    // Unset first: assigning over a response copies the old headers back, content-length included.
    c.res = undefined;
    c.res = new Response(clean, { status, statusText, headers });
  };
}
