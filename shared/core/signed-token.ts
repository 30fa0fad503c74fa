/**
 * Signed link tokens, the one shape every kind of link shares (acknowledgement `shared/ack/token.ts`,
 * chart `shared/chart/token.ts`): a JSON body, signed so nobody can forge, alter or stretch it.
 * Written here rather than with a JWT library because the wire form predates this module (links already
 * sent must keep working) and is a few lines of `node:crypto`; a library would add bytes to the bundle
 * and algorithm choices we do not want to offer.
 *
 * Wire form: `<payload>.<signature>`, both base64url without padding (RFC 4648 §5); `payload` is the
 * UTF-8 JSON body and `signature` is HMAC-SHA256 (RFC 2104) over the kind's {@link TokenDomain} +
 * `payload`. The domain prefix keeps the kinds apart: a token of one kind never verifies as another.
 * Rotation: a token signed with the previous key is accepted until that key's grace period ends.
 *
 * @see https://www.rfc-editor.org/rfc/rfc2104
 * @see https://www.rfc-editor.org/rfc/rfc4648#section-5
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Secret } from './secret.js';

/**
 * The domain prefix of each kind of token, one list so no two kinds can share one (the
 * acknowledgement form's CSRF MAC, `shared/ack/csrf.ts`, uses `csrf.v1.`: not a token domain).
 */
export type TokenDomain = 'ack.v1.' | 'chart.v1.';

/** The signing keys (`ACK_SECRET`, and `ACK_PREVIOUS_SECRET` during a rotation). */
export interface SigningKeys {
  current: Secret;
  /** Accepted for verification only, while `nowMs < untilMs` (epoch milliseconds). */
  previous?: { secret: Secret; untilMs: number };
}

/**
 * Why a token was refused: `malformed` (not a token at all, or a body of an unknown format),
 * `forged` (signature does not match: altered or not ours), `expired` (past its expiry),
 * `retired` (signed with the previous key after its grace period).
 */
export type TokenProblem = 'malformed' | 'forged' | 'expired' | 'retired';

/** The HTTP status a link's page answers each {@link TokenProblem} with. */
export const TOKEN_PROBLEM_STATUS: Record<TokenProblem, 400 | 403 | 410> = {
  malformed: 400,
  forged: 403,
  expired: 410,
  retired: 410,
};

/** Longest token accepted before any parsing, characters. */
const MAX_TOKEN_CHARS = 4096;

const mac = (domain: TokenDomain, key: Secret, payload: string) =>
  createHmac('sha256', key.reveal())
    .update(domain + payload)
    .digest();

/**
 * Signs a body with the current key.
 * @param body serialised with `JSON.stringify` as given (key order is the caller's)
 * @returns the URL-safe token (no characters that need escaping in a path segment)
 */
export function signToken(domain: TokenDomain, body: object, keys: Pick<SigningKeys, 'current'>): string {
  const payload = Buffer.from(JSON.stringify(body), 'utf8').toString('base64url');
  return `${payload}.${mac(domain, keys.current, payload).toString('base64url')}`;
}

/**
 * Opens a token: shape, then signature (current key, then the previous one within its grace period,
 * compared in constant time). The caller checks the body's format and expiry.
 * @param nowMs current time, epoch milliseconds
 * @returns the parsed JSON body (`undefined` when the signed payload is not JSON), or the problem
 */
export function openToken(
  domain: TokenDomain,
  token: string,
  keys: SigningKeys,
  nowMs: number,
): { body: unknown } | { problem: Exclude<TokenProblem, 'expired'> } {
  const [payload, signature, extra] = token.length <= MAX_TOKEN_CHARS ? token.split('.') : [];
  if (!payload || !signature || extra !== undefined || !/^[A-Za-z0-9_-]+$/.test(payload + signature))
    return { problem: 'malformed' };
  const given = Buffer.from(signature, 'base64url');
  // Only the canonical spelling counts: the decoder ignores a last character's unused bits, which
  // would make several links carry one signature.
  const canonical = given.toString('base64url') === signature;
  const matches = (key: Secret) => {
    const expected = mac(domain, key, payload);
    return canonical && given.length === expected.length && timingSafeEqual(given, expected);
  };
  if (!matches(keys.current)) {
    if (!keys.previous || !matches(keys.previous.secret)) return { problem: 'forged' };
    if (nowMs >= keys.previous.untilMs) return { problem: 'retired' };
  }
  return { body: parseJson(payload) };
}

function parseJson(payload: string): unknown {
  try {
    return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
}
