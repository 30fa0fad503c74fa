/**
 * The one place where webhook channels talk HTTP and where platform replies are classified
 * (Slack, Feishu): 2xx is accepted; 429, 5xx, time-outs and network errors are retryable;
 * everything else is permanent. Error messages never contain the URL (it carries the secret).
 */
import { redactSecrets, type Secret } from '../core/secret.js';
import { ContentRefusedError, DeliveryError, httpFailureReason } from './channel.js';

/** Longest excerpt of a reply body quoted in an error message (characters). */
const BODY_EXCERPT_CHARS = 200;

/** A 2xx reply. */
export interface HttpReply {
  status: number;
  /** The reply body as text (Slack: `ok`; Feishu: JSON with `code`). */
  body: string;
}

/**
 * POSTs `body` as JSON.
 * @param channel channel name, prefixed to error messages (`slack: HTTP 404: channel_not_found`)
 * @param url the webhook URL; revealed only for the request itself
 * @param signal aborts the request (the pipeline's per-attempt timeout)
 * @param options.refusesContent whether a non-2xx reply (status, body text) means the platform refused the content
 * @param options.statusDecides a 2xx status alone means accepted (Slack): the body is not awaited, so
 *   a reply that stalls or drops after its status line is not retried into a duplicate message
 * @returns the reply when its status is 2xx (`body` empty when `statusDecides`)
 * @throws DeliveryError retryable for 429 (with `retryAfterMs` from `Retry-After`), 5xx, time-outs
 *   and network errors; permanent for any other status (3xx, 4xx): a {@link ContentRefusedError} when
 *   `refusesContent` says so
 * @see https://www.rfc-editor.org/rfc/rfc9110#name-retry-after
 */
export async function postJson(
  channel: string,
  url: Secret,
  body: unknown,
  signal: AbortSignal,
  options: { statusDecides?: boolean; refusesContent?: (status: number, body: string) => boolean } = {},
): Promise<HttpReply> {
  let response: Response;
  try {
    response = await fetch(url.reveal(), {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify(body),
      signal,
      redirect: 'manual',
    });
  } catch (err) {
    throw new DeliveryError(`${channel}: ${signal.aborted ? 'request timed out or was aborted' : `request failed (${networkCode(err)})`}`, true, undefined, signal.aborted ? 'timeout' : 'network');
  }
  if (options.statusDecides && response.status >= 200 && response.status < 300) {
    void response.body?.cancel().catch(() => undefined);
    return { status: response.status, body: '' };
  }
  const text = await readBody(response, signal, channel);
  if (response.status >= 200 && response.status < 300) return { status: response.status, body: text };
  const retryable = response.status === 429 || response.status >= 500;
  const retryAfterMs = retryable ? parseRetryAfter(response.headers.get('retry-after'), Date.now()) : undefined;
  // A proxy page or platform error may echo the webhook path, in any encoding.
  const excerpt = redactSecrets(text).replace(/\s+/g, ' ').trim().slice(0, BODY_EXCERPT_CHARS);
  if (!retryable && options.refusesContent?.(response.status, text)) throw new ContentRefusedError(`${channel}: HTTP ${response.status}${excerpt ? `: ${excerpt}` : ''}`);
  throw new DeliveryError(`${channel}: HTTP ${response.status}${excerpt ? `: ${excerpt}` : ''}`, retryable, retryAfterMs, httpFailureReason(response.status));
}

async function readBody(response: Response, signal: AbortSignal, channel: string): Promise<string> {
  try {
    return await response.text();
  } catch (err) {
    const cause = signal.aborted ? 'timed out or was aborted' : `failed (${networkCode(err)})`;
    throw new DeliveryError(`${channel}: reading the HTTP ${response.status} reply ${cause}`, true, undefined, signal.aborted ? 'timeout' : 'network');
  }
}

/** The error code of a failed `fetch` (`ECONNREFUSED`, `UND_ERR_SOCKET`, …); never the message, which may name the URL. */
function networkCode(err: unknown): string {
  // fetch throws `TypeError: fetch failed`; the reason is in `cause`: a system error code, an
  // AggregateError of one per address tried, or only a message (undici's "bad port").
  const cause = (err as { cause?: { code?: unknown; message?: unknown; errors?: { code?: unknown }[] } } | undefined)?.cause;
  if (cause && typeof cause.code === 'string') return cause.code;
  const codes = [...new Set((cause?.errors ?? []).map((e) => e?.code).filter((c): c is string => typeof c === 'string'))];
  if (codes.length) return codes.join(', ');
  if (cause && typeof cause.message === 'string' && cause.message) return cause.message.slice(0, 120);
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
