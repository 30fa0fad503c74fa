/**
 * Verifies that a request came from Slack, as Slack's "Verifying requests from Slack" says: the
 * `X-Slack-Signature` header is `v0=` + hex HMAC-SHA256, keyed with the app's signing secret, of
 * `v0:<X-Slack-Request-Timestamp>:<raw body>`; a timestamp more than five minutes from now is refused
 * (a replayed request); the comparison takes constant time. Written here (a few lines over
 * `node:crypto`) rather than pulling in `@slack/bolt`, whose receiver would own the HTTP server.
 * @see https://api.slack.com/authentication/verifying-requests-from-slack
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Secret } from '../../core/secret.js';

/** The replay window, seconds either side of now. @see https://api.slack.com/authentication/verifying-requests-from-slack */
export const SLACK_SIGNATURE_MAX_AGE_SECONDS = 5 * 60;
/** The only signature version Slack defines. */
const VERSION = 'v0';

/** The signature Slack sends for `body` at `timestamp` (epoch seconds, as the header's text). */
export function slackSignature(secret: Secret, timestamp: string, body: string): string {
  return `${VERSION}=${createHmac('sha256', secret.reveal()).update(`${VERSION}:${timestamp}:${body}`, 'utf8').digest('hex')}`;
}

/**
 * @param headers the two headers as received (`undefined` when absent)
 * @param body the raw body, exactly as received (before any parsing)
 * @param nowMs the current time, epoch milliseconds
 * @returns `undefined` when authentic, else why not (for the log; never containing the secret)
 */
export function slackSignatureProblem(
  secret: Secret,
  headers: { timestamp?: string; signature?: string },
  body: string,
  nowMs: number,
): string | undefined {
  const { timestamp, signature } = headers;
  if (!timestamp || !signature) return 'missing X-Slack-Request-Timestamp or X-Slack-Signature';
  if (!/^\d{1,12}$/.test(timestamp)) return 'X-Slack-Request-Timestamp is not epoch seconds';
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > SLACK_SIGNATURE_MAX_AGE_SECONDS)
    return 'X-Slack-Request-Timestamp is more than 5 minutes from now (a replay, or a clock off)';
  const expected = Buffer.from(slackSignature(secret, timestamp, body), 'utf8');
  const given = Buffer.from(signature, 'utf8');
  // timingSafeEqual needs equal lengths; the length of a v0 signature is public anyway.
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    return 'X-Slack-Signature does not match (check SLACK_SIGNING_SECRET)';
  return undefined;
}
