/**
 * Bearer-token authentication for the routes Alertmanager and scripts call (`WEBHOOK_TOKEN`):
 * the webhook and the audit route share one middleware, so their answers cannot drift.
 * hono's `bearerAuth` compares in constant time (hashes both, then `timingSafeEqual`).
 *
 * @see https://www.rfc-editor.org/rfc/rfc6750 (Authorization: Bearer <token>)
 */
import type { MiddlewareHandler } from 'hono';
import { bearerAuth } from 'hono/bearer-auth';
import type { Secret } from './secret.js';

/**
 * @param token the token to require; `undefined` means no authentication (a pass-through middleware)
 * @returns middleware answering `401 {error}` for a missing or wrong token, `400 {error}` for a
 *   non-Bearer `Authorization` header
 */
export function requireBearer(token: Secret | undefined): MiddlewareHandler {
  if (!token) return async (_c, next) => next();
  return bearerAuth({
    token: token.reveal(),
    noAuthenticationHeaderMessage: { error: 'missing bearer token' },
    invalidTokenMessage: { error: 'invalid bearer token' },
    invalidAuthenticationHeaderMessage: { error: 'malformed Authorization header' },
  });
}
