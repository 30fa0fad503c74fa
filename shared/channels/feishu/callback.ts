/**
 * Verifies a callback from the Feishu Open Platform (a card button's `card.action.trigger`) as Feishu
 * documents it, refusing what the official SDK lets through:
 * - the Encrypt Key is required (`FEISHU_ENCRYPT_KEY`): without it every callback is refused (the SDK
 *   accepts everything then); a body that is not encrypted (`{"encrypt": …}`) is refused;
 * - `X-Lark-Signature` = hex SHA-256 of `X-Lark-Request-Timestamp + X-Lark-Request-Nonce + encrypt key +
 *   the raw body`, over the body exactly as received, compared in constant time; the timestamp (epoch
 *   seconds) must be within 5 minutes of now;
 * - the body decrypts with AES-256-CBC, key SHA-256(encrypt key), IV the first 16 bytes of the base64
 *   cipher text, PKCS#7 padding;
 * - the `url_verification` challenge (which Feishu sends unsigned, encrypted) is answered when it decrypts;
 * - the Verification Token (`FEISHU_VERIFICATION_TOKEN`), when set, must match `header.token` (or the
 *   challenge's `token`), in constant time.
 * Acting on each `event_id` once is the route's (`shared/ack/feishu-callback.ts`).
 * @see https://open.feishu.cn/document/event-subscription-guide/callback-subscription/receive-and-handle-callbacks
 * @see https://open.feishu.cn/document/event-subscription-guide/callback-subscription/step-1-choose-a-subscription-mode/send-callbacks-to-developers-server
 */
import { createDecipheriv, createHash, timingSafeEqual } from 'node:crypto';
import type { Secret } from '../../core/secret.js';

/** The replay window, seconds either side of now. */
export const FEISHU_CALLBACK_MAX_AGE_SECONDS = 5 * 60;
/** AES block and IV size, bytes. */
const BLOCK = 16;

/** What a verified request is. */
export type FeishuCallback =
  | { kind: 'challenge'; challenge: string }
  | { kind: 'event'; eventId: string; eventType: string; appId?: string; event: Record<string, unknown> };

export interface FeishuCallbackHeaders {
  timestamp?: string;
  nonce?: string;
  signature?: string;
}

/** The signature Feishu sends: hex SHA-256 of `timestamp + nonce + encryptKey + body` (UTF-8). */
export function feishuCallbackSignature(timestamp: string, nonce: string, encryptKey: Secret, body: string): string {
  return createHash('sha256')
    .update(`${timestamp}${nonce}${encryptKey.reveal()}`, 'utf8')
    .update(body, 'utf8')
    .digest('hex');
}

/**
 * Decrypts an `encrypt` field.
 * @returns the plain text (UTF-8)
 * @throws Error when it is not base64 of an IV and whole blocks, or the padding is wrong (another key)
 */
export function decryptFeishu(encrypt: string, encryptKey: Secret): string {
  const data = Buffer.from(encrypt, 'base64');
  if (data.length < 2 * BLOCK || data.length % BLOCK !== 0) throw new Error('not an encrypted Feishu body');
  const key = createHash('sha256').update(encryptKey.reveal(), 'utf8').digest();
  const decipher = createDecipheriv('aes-256-cbc', key, data.subarray(0, BLOCK));
  return Buffer.concat([decipher.update(data.subarray(BLOCK)), decipher.final()]).toString('utf8');
}

/** Constant-time equality of two strings (their lengths are not secret). */
function same(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * @param rawBody the body exactly as received
 * @param settings `encryptKey` unset: every request is refused
 * @param nowMs epoch milliseconds
 * @returns the verified callback, or why it was refused (for the log: never a secret)
 */
export function verifyFeishuCallback(
  headers: FeishuCallbackHeaders,
  rawBody: string,
  settings: { encryptKey?: Secret; verificationToken?: Secret },
  nowMs: number,
): FeishuCallback | { problem: string } {
  const key = settings.encryptKey;
  if (!key) return { problem: 'FEISHU_ENCRYPT_KEY is not set: callbacks are refused until it is' };
  const signed = headers.timestamp !== undefined || headers.nonce !== undefined || headers.signature !== undefined;
  if (signed) {
    const problem = signatureProblem(headers, rawBody, key, nowMs);
    if (problem) return { problem };
  }
  const opened = decrypted(rawBody, key);
  if (typeof opened === 'string') return { problem: opened };
  const payload = opened;
  const token = settings.verificationToken?.reveal();
  if (payload.type === 'url_verification') {
    if (typeof payload.challenge !== 'string') return { problem: 'url_verification without a challenge' };
    if (token !== undefined && !same(String(payload.token ?? ''), token))
      return { problem: 'the Verification Token does not match (check FEISHU_VERIFICATION_TOKEN)' };
    return { kind: 'challenge', challenge: payload.challenge };
  }
  if (!signed) return { problem: 'missing X-Lark-Signature, X-Lark-Request-Timestamp or X-Lark-Request-Nonce' };
  const header = payload.header as Record<string, unknown> | undefined;
  if (payload.schema !== '2.0' || !header || typeof header.event_id !== 'string' || !header.event_id)
    return { problem: 'not a callback of schema 2.0 with an event_id' };
  if (token !== undefined && !same(String(header.token ?? ''), token))
    return { problem: 'the Verification Token does not match (check FEISHU_VERIFICATION_TOKEN)' };
  return {
    kind: 'event',
    eventId: header.event_id,
    eventType: String(header.event_type ?? ''),
    ...(typeof header.app_id === 'string' && { appId: header.app_id }),
    event: (payload.event && typeof payload.event === 'object' ? payload.event : {}) as Record<string, unknown>,
  };
}

function signatureProblem(
  headers: FeishuCallbackHeaders,
  body: string,
  key: Secret,
  nowMs: number,
): string | undefined {
  const { timestamp, nonce, signature } = headers;
  if (!timestamp || !nonce || !signature)
    return 'missing X-Lark-Signature, X-Lark-Request-Timestamp or X-Lark-Request-Nonce';
  if (!/^\d{1,12}$/.test(timestamp)) return 'X-Lark-Request-Timestamp is not epoch seconds';
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > FEISHU_CALLBACK_MAX_AGE_SECONDS)
    return 'X-Lark-Request-Timestamp is more than 5 minutes from now (a replay, or a clock off)';
  if (!same(signature.toLowerCase(), feishuCallbackSignature(timestamp, nonce, key, body)))
    return 'X-Lark-Signature does not match (check FEISHU_ENCRYPT_KEY)';
  return undefined;
}

/** The decrypted JSON object of an `{"encrypt": …}` body, or why not. */
function decrypted(rawBody: string, key: Secret): Record<string, unknown> | string {
  let outer: unknown;
  try {
    outer = JSON.parse(rawBody);
  } catch {
    return 'the body is not JSON';
  }
  const encrypt = (outer as { encrypt?: unknown } | null)?.encrypt;
  if (typeof encrypt !== 'string')
    return 'the body is not encrypted (set the Encrypt Key in Events & Callbacks > Encryption Strategy)';
  try {
    const inner = JSON.parse(decryptFeishu(encrypt, key)) as unknown;
    if (inner && typeof inner === 'object' && !Array.isArray(inner)) return inner as Record<string, unknown>;
  } catch {
    // Falls through: another key, or not Feishu's.
  }
  return 'the body does not decrypt with FEISHU_ENCRYPT_KEY';
}
