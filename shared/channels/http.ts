/**
 * The one place where webhook channels talk HTTP and where platform replies are classified
 * (Slack, Feishu): 2xx is accepted; 429, 5xx, time-outs and network errors are retryable;
 * everything else is permanent. Error messages never contain the URL (it carries the secret).
 * Sent with `node:http`, not `fetch` (`core/http-request.ts` says why); redirects are not followed.
 */
import { BodyTooLargeError, failedAfterBodySent, httpRequest, type HttpAnswer } from '../core/http-request.js';
import { redactedExcerpt, type Secret } from '../core/secret.js';
import { ContentRefusedError, DeliveryError, httpFailureReason, UNKNOWN_OUTCOME_MESSAGE } from './channel.js';

/** Longest excerpt of a reply body quoted in an error message (characters). */
const BODY_EXCERPT_CHARS = 200;

/**
 * Most of a reply read, bytes. Slack answers `ok` or an error word, Feishu and PagerDuty a small
 * JSON object; a reply past this (a proxy's endless stream) is not theirs, and reading it whole would
 * hold it all in memory until the attempt's time-out. Past it the reply counts as empty: its status decides.
 */
export const MAX_REPLY_BYTES = 1024 * 1024;

/** A 2xx reply. */
export interface HttpReply {
  status: number;
  /** The reply body as text (Slack: `ok`; Feishu: JSON with `code`). */
  body: string;
}

/** Where {@link postJson} posts, and how it reads the platform's replies. */
export interface JsonPost {
  /** Channel name, prefixed to error messages (`slack: HTTP 404: channel_not_found`). */
  channel: string;
  /**
   * The webhook URL, a {@link Secret} revealed only for the request itself; or a plain string for an
   * endpoint that is no secret (PagerDuty's: the key travels in the body).
   */
  url: Secret | string;
  /**
   * A 2xx status means accepted (Slack) unless its body arrives and `successBody` refuses it; a reply
   * that stalls or drops after its status line is not retried into a duplicate message.
   */
  statusDecides?: boolean;
  /** With `statusDecides`: whether a 2xx body is the platform's success reply. */
  successBody?: (body: string) => boolean;
  /** Whether a non-2xx reply (status, body text) means the platform refused the content. */
  refusesContent?: (status: number, body: string) => boolean;
  /**
   * Whether a non-2xx reply means "too many requests" though its status is not 429 (Feishu's older APIs
   * answer HTTP 400 with a rate-limit `code`): retryable, reason `rate_limited`.
   */
  rateLimited?: (status: number, body: string) => boolean;
}

/**
 * POSTs `body` as JSON.
 * @param signal aborts the request (the pipeline's per-attempt timeout)
 * @returns the reply when its status is 2xx (`body` empty when it stalled after the status line or ran past {@link MAX_REPLY_BYTES})
 * @throws DeliveryError retryable for 429 (with `retryAfterMs` from `Retry-After`), 5xx, time-outs
 *   and network errors (a time-out after the whole body was sent has `outcomeUnknown`: it may have been delivered); permanent for any other status (3xx, 4xx): a {@link ContentRefusedError} when
 *   `refusesContent` says so
 * @see https://www.rfc-editor.org/rfc/rfc9110#name-retry-after
 */
export async function postJson(to: JsonPost, body: unknown, signal: AbortSignal): Promise<HttpReply> {
  let response: HttpAnswer;
  try {
    response = await httpRequest(typeof to.url === 'string' ? to.url : to.url.reveal(), {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify(body),
      signal,
    });
  } catch (err) {
    throw unanswered(to.channel, err, signal);
  }
  const ok = response.status >= 200 && response.status < 300;
  if (to.statusDecides && ok) return acceptedUnlessRefused(to.channel, response, to.successBody);
  const text = await readBody(response, signal, to.channel);
  if (ok) return { status: response.status, body: text };
  throw failed(to, response, text);
}

/** The error of a non-2xx reply: retryable for 429 (or what `rateLimited` says) and 5xx, else permanent. */
function failed(to: JsonPost, response: HttpAnswer, text: string): DeliveryError {
  const rateLimited = response.status === 429 || (to.rateLimited?.(response.status, text) ?? false);
  const retryable = rateLimited || response.status >= 500;
  const retryAfterMs = retryable ? parseRetryAfter(response.header('retry-after') ?? null, Date.now()) : undefined;
  // A proxy page or platform error may echo the webhook path, in any encoding: redacted before it is cut.
  const excerpt = redactedExcerpt(text, BODY_EXCERPT_CHARS);
  const message = `${to.channel}: HTTP ${response.status}${excerpt ? `: ${excerpt}` : ''}`;
  if (!retryable && to.refusesContent?.(response.status, text)) return new ContentRefusedError(message);
  const reason = rateLimited ? 'rate_limited' : httpFailureReason(response.status);
  return new DeliveryError(message, { retryable, retryAfterMs, reason });
}

/**
 * A request that got no answer: retryable; when it timed out after its whole body was sent, its outcome is
 * unknown (`outcomeUnknown`: the platform may have taken it).
 */
function unanswered(channel: string, err: unknown, signal: AbortSignal): DeliveryError {
  if (signal.aborted && failedAfterBodySent(err))
    return new DeliveryError(`${channel}: ${UNKNOWN_OUTCOME_MESSAGE}`, {
      retryable: true,
      reason: 'timeout',
      outcomeUnknown: true,
    });
  return new DeliveryError(
    `${channel}: ${signal.aborted ? 'request timed out or was aborted' : `request failed (${networkCode(err)})`}`,
    { retryable: true, reason: signal.aborted ? 'timeout' : 'network' },
  );
}

/**
 * A 2xx reply whose status decides: accepted, unless its body arrives and is not the platform's
 * success body (a proxy's login page, a URL that is not an incoming webhook), which fails permanently.
 * A body that stalls or drops after the status line is acceptance: retrying it could send a duplicate.
 */
async function acceptedUnlessRefused(
  channel: string,
  response: HttpAnswer,
  successBody?: (body: string) => boolean,
): Promise<HttpReply> {
  const text = await response.text(MAX_REPLY_BYTES).catch(() => undefined);
  if (text === undefined || !successBody || successBody(text)) return { status: response.status, body: text ?? '' };
  const excerpt = redactedExcerpt(text, BODY_EXCERPT_CHARS) || '(empty)';
  throw new DeliveryError(`${channel}: HTTP ${response.status} but not the platform's success reply: ${excerpt}`, {
    retryable: false,
    reason: 'platform_error',
  });
}

async function readBody(response: HttpAnswer, signal: AbortSignal, channel: string): Promise<string> {
  try {
    return await response.text(MAX_REPLY_BYTES);
  } catch (err) {
    if (err instanceof BodyTooLargeError) return '';
    const cause = signal.aborted ? 'timed out or was aborted' : `failed (${networkCode(err)})`;
    throw new DeliveryError(`${channel}: reading the HTTP ${response.status} reply ${cause}`, {
      retryable: true,
      reason: signal.aborted ? 'timeout' : 'network',
    });
  }
}

type ErrorShape = { code?: unknown; message?: unknown; errors?: { code?: unknown }[]; cause?: ErrorShape };

/** The error code of a failed request (`ECONNREFUSED`, `ECONNRESET`, …); never the message, which may name the URL. */
function networkCode(err: unknown): string {
  const e = err as ErrorShape | undefined;
  // Node's system error carries its `code`, several addresses tried make an AggregateError of one
  // each; an error wrapping another (as `fetch`'s `TypeError: fetch failed` does) has them in `cause`.
  for (const source of [e, e?.cause]) {
    if (typeof source?.code === 'string') return source.code;
    const codes = [
      ...new Set((source?.errors ?? []).map((x) => x?.code).filter((c): c is string => typeof c === 'string')),
    ];
    if (codes.length) return codes.join(', ');
  }
  // Redacted before it is cut: a message may quote the URL, and a cut one would leave part of it.
  if (typeof e?.cause?.message === 'string' && e.cause.message) return redactedExcerpt(e.cause.message, 120);
  return err instanceof Error ? err.name : 'unknown error';
}

/**
 * Parses an HTTP `Retry-After` header: delay-seconds (`120`) or an HTTP-date.
 * @param nowMs the current time, epoch milliseconds (for the HTTP-date form)
 * @returns the delay in milliseconds (≥ 0), or `undefined` when absent or unparsable
 */
export function parseRetryAfter(value: string | null, nowMs: number): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  // An HTTP-date always names a weekday or month; this keeps `Date.parse` from reading `-5` as a year.
  const date = /[a-z]/i.test(trimmed) ? Date.parse(trimmed) : Number.NaN;
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - nowMs);
}
