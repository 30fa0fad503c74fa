/**
 * Acknowledgement link tokens: what an "Acknowledge" link names, signed so that nobody can forge,
 * alter or stretch one.
 *
 * Wire form: `<payload>.<signature>`, both base64url without padding (RFC 4648 §5), where
 * `payload` is the UTF-8 JSON `{"v":1,"f":[fingerprints],"g":group,"c":channel,"iat":s,"exp":s}` (epoch seconds),
 * plus `"s":id,"n":count` when the link names a stored alert set (a storm digest's alerts, beyond what `f`
 * can carry: `shared/ack/alert-set.ts`), and `signature` is HMAC-SHA256 (RFC 2104) keyed with `ACK_SECRET` over `ack.v1.` + `payload`.
 * Rotation: a token signed with the previous key is accepted until that key's grace period ends.
 *
 * @see https://www.rfc-editor.org/rfc/rfc2104
 * @see https://www.rfc-editor.org/rfc/rfc4648#section-5
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { Secret } from '../core/secret.js';
import { PipelineError } from '../core/errors.js';

/** Most fingerprints one link names; a larger group's link covers its first alerts (Slack shows fewer anyway). */
export const MAX_TOKEN_ALERTS = 50;
/** Longest group key carried as is; longer ones are carried as `sha256:<16 hex>`. */
const MAX_GROUP_CHARS = 200;
/** Longest token accepted before any parsing, characters (50 fingerprints and a group fit in ~2 KiB). */
export const MAX_TOKEN_CHARS = 4096;
const DOMAIN = 'ack.v1.';

/** What a valid token says. */
export interface AckClaims {
  /** Alertmanager fingerprints of the alerts the link acknowledges (1…{@link MAX_TOKEN_ALERTS}). */
  fingerprints: string[];
  /** The Alertmanager `groupKey` (or its `sha256:` digest when long); for display and audit. */
  group: string;
  /** Name of the channel whose message carried the link (`slack`, `feishu`, `sns`, `escalation-slack`…). */
  channel: string;
  /** When the link was made, epoch seconds: it acknowledges only occurrences that had started by then. */
  issuedAt: number;
  /** Expiry, epoch seconds. */
  expiresAt: number;
  /**
   * A storm digest's link: the id of the stored set of every firing alert the message carried, and how
   * many there were. `fingerprints` then holds the first {@link MAX_TOKEN_ALERTS} of them (what the page
   * falls back to when the set cannot be read). Covered by the signature like every claim.
   */
  set?: { id: string; alerts: number };
}

/** The signing keys: the current `ACK_SECRET` and, during a rotation, the previous one. */
export interface AckKeys {
  current: Secret;
  /** Accepted for verification only, while `nowMs < untilMs` (epoch milliseconds). */
  previous?: { secret: Secret; untilMs: number };
}

/**
 * Why a token was refused, and the HTTP status the page answers with:
 * `malformed` 400 (not a token at all), `forged` 403 (signature does not match: altered or not ours),
 * `expired` 410 (past `exp`), `retired` 410 (signed with the previous key after its grace period).
 */
export type AckTokenProblem = 'malformed' | 'forged' | 'expired' | 'retired';

export const TOKEN_PROBLEM_STATUS: Record<AckTokenProblem, 400 | 403 | 410> = { malformed: 400, forged: 403, expired: 410, retired: 410 };

/** Thrown by {@link verifyAckToken}; `message` is safe to show on the page (it never echoes the token). */
export class AckTokenError extends PipelineError<AckTokenProblem> {
  constructor(readonly problem: AckTokenProblem, message: string) {
    super(message, problem);
    this.name = 'AckTokenError';
  }
}

const b64url = (buf: Buffer) => buf.toString('base64url');
const mac = (key: Secret, payload: string) => createHmac('sha256', key.reveal()).update(DOMAIN + payload).digest();

/** The group as carried in a token: the key itself when short, else `sha256:` and 16 hex digits of its digest. */
export function tokenGroup(groupKey: string): string {
  if (groupKey.length <= MAX_GROUP_CHARS) return groupKey;
  return `sha256:${createHash('sha256').update(groupKey).digest('hex').slice(0, 16)}`;
}

/**
 * Signs a token with the current key.
 * @param claims `fingerprints` beyond {@link MAX_TOKEN_ALERTS} are dropped; `group` is passed through {@link tokenGroup}
 * @returns the URL-safe token (no characters that need escaping in a path segment)
 * @throws Error when `fingerprints` is empty
 */
export function signAckToken(claims: AckClaims, keys: Pick<AckKeys, 'current'>): string {
  if (claims.fingerprints.length === 0) throw new Error('an acknowledgement token needs at least one fingerprint');
  const body = { v: 1, f: claims.fingerprints.slice(0, MAX_TOKEN_ALERTS), g: tokenGroup(claims.group), c: claims.channel, iat: Math.floor(claims.issuedAt), exp: Math.floor(claims.expiresAt), ...(claims.set && { s: claims.set.id, n: claims.set.alerts }) };
  const payload = b64url(Buffer.from(JSON.stringify(body), 'utf8'));
  return `${payload}.${b64url(mac(keys.current, payload))}`;
}

/**
 * Verifies a token: shape, signature (current key, then the previous one within its grace period,
 * compared in constant time), then expiry.
 * @param nowMs current time, epoch milliseconds
 * @throws AckTokenError naming the problem
 */
export function verifyAckToken(token: string, keys: AckKeys, nowMs: number): AckClaims {
  const [payload, signature, extra] = token.length <= MAX_TOKEN_CHARS ? token.split('.') : [];
  if (!payload || !signature || extra !== undefined || !/^[A-Za-z0-9_-]+$/.test(payload + signature)) {
    throw new AckTokenError('malformed', 'This is not an acknowledgement link (the token is malformed).');
  }
  const given = Buffer.from(signature, 'base64url');
  // Only the canonical spelling counts: the decoder ignores a last character's unused bits, which
  // would make several links carry one signature.
  const canonical = b64url(given) === signature;
  const matches = (key: Secret) => {
    const expected = mac(key, payload);
    return canonical && given.length === expected.length && timingSafeEqual(given, expected);
  };
  if (!matches(keys.current)) {
    if (!keys.previous || !matches(keys.previous.secret)) {
      throw new AckTokenError('forged', 'This acknowledgement link is not valid: its signature does not match (altered or not issued by this service).');
    }
    if (nowMs >= keys.previous.untilMs) {
      throw new AckTokenError('retired', 'This acknowledgement link was signed with a key that has since been retired. Use a link from a newer message.');
    }
  }
  const claims = parseClaims(payload);
  if (claims.expiresAt * 1000 <= nowMs) {
    throw new AckTokenError('expired', `This acknowledgement link expired at ${new Date(claims.expiresAt * 1000).toISOString()}.`);
  }
  return claims;
}

/** Reads a payload whose signature already matched; a bad shape here means a bug or an old format. */
function parseClaims(payload: string): AckClaims {
  let body: { v?: unknown; f?: unknown; g?: unknown; c?: unknown; iat?: unknown; exp?: unknown; s?: unknown; n?: unknown };
  try {
    body = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as typeof body;
  } catch {
    throw new AckTokenError('malformed', 'This acknowledgement link could not be read.');
  }
  const fingerprints = Array.isArray(body.f) ? body.f.filter((f): f is string => typeof f === 'string' && f.length > 0) : [];
  if (body.v !== 1 || fingerprints.length === 0 || typeof body.g !== 'string' || typeof body.c !== 'string' || typeof body.iat !== 'number' || typeof body.exp !== 'number') {
    throw new AckTokenError('malformed', 'This acknowledgement link has an unknown format.');
  }
  const claims: AckClaims = { fingerprints, group: body.g, channel: body.c, issuedAt: body.iat, expiresAt: body.exp };
  if (typeof body.s === 'string' && /^[0-9a-f]{32}$/.test(body.s) && typeof body.n === 'number' && Number.isSafeInteger(body.n) && body.n > 0) claims.set = { id: body.s, alerts: body.n };
  return claims;
}
