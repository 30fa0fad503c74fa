/**
 * Bearer-token authentication for the routes Alertmanager, Prometheus and scripts call
 * (`WEBHOOK_TOKEN`): the webhook, `GET /metrics` and the audit route share one middleware, so their
 * answers cannot drift. hono's `bearerAuth` parses the header and answers; the comparison here is in
 * constant time (SHA-256 of both sides, then `timingSafeEqual`).
 *
 * Fails closed: with no token configured, every request is refused with 503 (so Alertmanager keeps
 * retrying until the token is set) unless unauthenticated use was allowed explicitly
 * (`ALLOW_UNAUTHENTICATED=true`, or `npm start` listening on loopback only). The check runs before
 * anything reads the body, so unauthenticated traffic costs a header comparison.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6750 (Authorization: Bearer <token>)
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import { bearerAuth } from 'hono/bearer-auth';
import { HTTPException } from 'hono/http-exception';
import type { Logger } from '../core/logger.js';
import type { Metrics, UnauthenticatedReason } from '../metrics/catalogue.js';
import type { Secret } from '../core/secret.js';

/** The webhook's path: a wrong token there is an Alertmanager's; no token, noise. */
const WEBHOOK_PATH = '/v1/alertmanager';

/** The tokens accepted now: `current` (`WEBHOOK_TOKEN`) and, during a rotation, `previous` (`WEBHOOK_TOKEN_PREVIOUS`). */
export interface WebhookTokens {
  current?: Secret;
  previous?: Secret;
}

/** Where the tokens come from: fixed for `npm start`, re-read from the settings secret in Lambda. Must not throw. */
export type TokenSource = () => WebhookTokens | Promise<WebhookTokens>;

export interface BearerOptions {
  tokens: TokenSource;
  /** With no token configured: serve (`true`) or refuse with 503 (`false`, the default). */
  allowUnauthenticated?: boolean;
  logger: Logger;
  metrics: Metrics;
}

/** Answer to a webhook when no token is configured and unauthenticated use is not allowed. */
export const NO_TOKEN_ERROR =
  'WEBHOOK_TOKEN is not configured: refusing unauthenticated requests (set WEBHOOK_TOKEN, or ALLOW_UNAUTHENTICATED=true)';

/**
 * @returns middleware answering `401 {error}` for a missing or wrong token, `400 {error}` for a
 *   non-Bearer `Authorization` header, `503 {error}` when no token is configured (fail closed);
 *   each refusal is counted as `webhook_unauthenticated_total{reason}`
 */
export function requireBearer(options: BearerOptions): MiddlewareHandler {
  return async (c, next) => {
    const tokens = await options.tokens();
    if (!tokens.current && !tokens.previous) {
      if (options.allowUnauthenticated) return next();
      return refuseUnconfigured(c, options);
    }
    // Built per request: the tokens may have changed since the last one (a re-read settings secret).
    const bearer = bearerAuth({
      verifyToken: async (token) => matches(token, tokens),
      noAuthenticationHeaderMessage: { error: 'missing bearer token' },
      invalidTokenMessage: { error: 'invalid bearer token' },
      invalidAuthenticationHeaderMessage: { error: 'malformed Authorization header' },
    });
    try {
      return await bearer(c, next);
    } catch (err) {
      if (err instanceof HTTPException) {
        const reason = refusalReason(c, err.status);
        options.metrics.inc('webhook_unauthenticated_total', { reason });
        // The signal (an Alertmanager with a stale token) apart from the noise (no token at all).
        if (c.req.path.startsWith(WEBHOOK_PATH) && reason === 'invalid_token')
          options.metrics.inc('webhook_wrong_token_total', {});
        if (c.req.path.startsWith(WEBHOOK_PATH) && reason === 'missing_token')
          options.metrics.inc('unsolicited_requests_total', { reason: 'no_token' });
      }
      throw err;
    }
  };
}

function refuseUnconfigured(c: Context, options: BearerOptions): Response {
  options.metrics.inc('webhook_unauthenticated_total', { reason: 'no_token_configured' });
  options.logger.error('webhook refused', {
    method: c.req.method,
    path: c.req.path,
    status: 503,
    reason: 'no_token_configured',
    detail: NO_TOKEN_ERROR,
  });
  return c.json({ error: NO_TOKEN_ERROR }, 503);
}

function refusalReason(c: Context, status: number): UnauthenticatedReason {
  if (status === 400) return 'malformed_header';
  return c.req.header('authorization') ? 'invalid_token' : 'missing_token';
}

/**
 * Whether the request could be a sender of ours: its `Authorization: Bearer` token is one of the
 * accepted tokens, or no token is configured (then every request is served or refused alike).
 * Compared in constant time, as the middleware does.
 */
export async function carriesOurToken(c: Context, source: TokenSource): Promise<boolean> {
  const tokens = await source();
  if (!tokens.current && !tokens.previous) return true;
  const header = c.req.header('authorization') ?? '';
  const token = /^Bearer +(\S+)\s*$/i.exec(header.slice(0, MAX_AUTHORIZATION_CHARS))?.[1];
  return token !== undefined && matches(token, tokens);
}

/** Longest `Authorization` header read for {@link carriesOurToken} (a token is far shorter). */
const MAX_AUTHORIZATION_CHARS = 4096;

function matches(token: string, tokens: WebhookTokens): boolean {
  const given = digest(token);
  // Both compared every time, so the answer's timing does not say which one matched.
  const results = [tokens.current, tokens.previous].map(
    (t) => t !== undefined && timingSafeEqual(given, digest(t.reveal())),
  );
  return results.some(Boolean);
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
