/**
 * Replies of the platforms that answer every request with HTTP 200 and `{"errcode": n, "errmsg": "…"}`
 * (DingTalk's custom robot, WeCom's group robot): `errcode` 0 is success; any other code is a failure,
 * classified by the channel's own table of its platform's documented codes (rate limit, the platform's
 * own trouble, the channel's configuration, the message's content). A code in none of them is a
 * permanent `platform_error` quoting `errmsg` (redacted, cut), which the pipeline answers with a 5xx.
 */
import { redactedExcerpt } from '../core/secret.js';
import { ContentRefusedError, DeliveryError } from './channel.js';

/** A platform's codes, each with what it means. */
export interface ErrcodeTable {
  /** Too many messages: retryable, with how long the platform makes the robot wait (milliseconds) when it says. */
  rateLimited: ReadonlyMap<number, number | undefined>;
  /** The platform's own trouble: retryable. */
  transient: ReadonlySet<number>;
  /** The channel's configuration: permanent; the value says what to fix, naming the setting. */
  configuration: ReadonlyMap<number, string>;
  /** This message's content was refused: a reduced rendering may pass. */
  content: ReadonlySet<number>;
}

/** Longest `errmsg` quoted in an error, characters. */
const MSG_EXCERPT_CHARS = 200;

/** `errcode`/`errmsg` of a reply; `undefined` when it is not such a JSON object. */
export function parseErrcode(body: string): { errcode: number; errmsg: string } | undefined {
  let reply: { errcode?: unknown; errmsg?: unknown } | null;
  try {
    reply = JSON.parse(body) as typeof reply;
  } catch {
    return undefined;
  }
  if (reply === null || typeof reply !== 'object' || typeof reply.errcode !== 'number') return undefined;
  return { errcode: reply.errcode, errmsg: String(reply.errmsg ?? '') };
}

/**
 * Reads a 2xx reply: returns on `errcode` 0, else throws.
 * @param name the channel instance, prefixed to the message
 * @throws DeliveryError retryable for `rateLimited` (reason `rate_limited`, `retryAfterMs`) and `transient`
 *   codes (`server_error`); {@link ContentRefusedError} for `content`; permanent otherwise (`client_error`
 *   for configuration codes, `platform_error` for unknown ones and for a reply that is not the platform's JSON)
 */
export function checkErrcodeReply(name: string, body: string, table: ErrcodeTable): void {
  const reply = parseErrcode(body);
  if (!reply) throw new DeliveryError(`${name}: reply is not the platform's JSON (errcode)`, { retryable: false });
  const { errcode } = reply;
  if (errcode === 0) return;
  const said = `${name}: errcode ${errcode}${reply.errmsg ? `: ${redactedExcerpt(reply.errmsg, MSG_EXCERPT_CHARS)}` : ''}`;
  if (table.rateLimited.has(errcode))
    throw new DeliveryError(said, {
      retryable: true,
      retryAfterMs: table.rateLimited.get(errcode),
      reason: 'rate_limited',
    });
  if (table.transient.has(errcode)) throw new DeliveryError(said, { retryable: true, reason: 'server_error' });
  if (table.content.has(errcode)) throw new ContentRefusedError(said);
  const fix = table.configuration.get(errcode);
  if (fix)
    throw new DeliveryError(`${said} (configuration error: ${fix})`, { retryable: false, reason: 'client_error' });
  throw new DeliveryError(said, { retryable: false });
}

/** For `postJson`: a non-2xx reply whose body carries a rate-limit code. */
export const errcodeRateLimited =
  (table: ErrcodeTable) =>
  (_status: number, body: string): boolean => {
    const reply = parseErrcode(body);
    return reply !== undefined && table.rateLimited.has(reply.errcode);
  };
