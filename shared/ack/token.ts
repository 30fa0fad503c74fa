/**
 * Acknowledgement link tokens: what an "Acknowledge" link names, signed so that nobody can forge,
 * alter or stretch one.
 *
 * Wire form: a signed token of `shared/core/signed-token.ts` (`<payload>.<signature>`, HMAC-SHA256 keyed
 * with `ACK_SECRET` over `ack.v1.` + `payload`), where `payload` is the UTF-8 JSON
 * `{"v":1,"f":[fingerprints],"g":group,"c":channel,"iat":s,"exp":s,"st":ms}` (epoch seconds; `st` the latest
 * `startsAt` of the link's alerts, epoch milliseconds, absent from links made before it existed), plus
 * `"l":"zh-CN"` when the channel writes Chinese (absent: English, and in every link made before it existed), plus
 * `"s":id,"n":count` when the link names a stored alert set (a storm digest's alerts, beyond what `f` can carry:
 * `shared/store/alert-set.ts`). Rotation: a token signed with the previous key is accepted until that
 * key's grace period ends.
 */
import { createHash } from 'node:crypto';
import { PipelineError } from '../core/errors.js';
import { openToken, signToken, type SigningKeys, type TokenDomain, type TokenProblem } from '../core/signed-token.js';
import type { Locale } from '../core/locale.js';

/** Most fingerprints one link names; a larger group's link covers its first alerts (Slack shows fewer anyway). */
export const MAX_TOKEN_ALERTS = 50;
/** Longest group key carried as is; longer ones are carried as `sha256:<16 hex>`. */
const MAX_GROUP_CHARS = 200;
const DOMAIN: TokenDomain = 'ack.v1.';

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
   * The latest `startsAt` of the alerts the link was made for, epoch milliseconds, on the sender's clock
   * (Prometheus's or Grafana's): the link covers occurrences that started by then, compared with the
   * sender's own times, so no skew between its clock and ours matters. Absent in links made before it
   * existed, and when no alert's `startsAt` was known.
   */
  startsAt?: number;
  /**
   * A storm digest's link: the id of the stored set of every firing alert the message carried, and how
   * many there were. `fingerprints` then holds the first {@link MAX_TOKEN_ALERTS} of them (what the page
   * falls back to when the set cannot be read). Covered by the signature like every claim.
   */
  set?: { id: string; alerts: number };
  /**
   * The language of the channel whose message carried the link, when not English: the page it opens is
   * in that language. Links made before it existed have none (and English channels' links none either).
   */
  locale?: Locale;
}

/** Thrown by {@link verifyAckToken}; `message` is safe to show on the page (it never echoes the token). */
export class AckTokenError extends PipelineError<TokenProblem> {
  constructor(
    readonly problem: TokenProblem,
    message: string,
  ) {
    super(message, problem);
    this.name = 'AckTokenError';
  }
}

/** What the page says of a token refused before its claims are read. */
const REFUSED: Record<Exclude<TokenProblem, 'expired'>, string> = {
  malformed: 'This is not an acknowledgement link (the token is malformed).',
  forged:
    'This acknowledgement link is not valid: its signature does not match (altered or not issued by this service).',
  retired:
    'This acknowledgement link was signed with a key that has since been retired. Use a link from a newer message.',
};

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
export function signAckToken(claims: AckClaims, keys: Pick<SigningKeys, 'current'>): string {
  if (claims.fingerprints.length === 0) throw new Error('an acknowledgement token needs at least one fingerprint');
  const body = {
    v: 1,
    f: claims.fingerprints.slice(0, MAX_TOKEN_ALERTS),
    g: tokenGroup(claims.group),
    c: claims.channel,
    iat: Math.floor(claims.issuedAt),
    exp: Math.floor(claims.expiresAt),
    ...(claims.startsAt !== undefined && { st: Math.floor(claims.startsAt) }),
    ...(claims.set && { s: claims.set.id, n: claims.set.alerts }),
    ...(claims.locale && claims.locale !== 'en' && { l: claims.locale }),
  };
  return signToken(DOMAIN, body, keys);
}

/**
 * Verifies a token: shape, signature (current key, then the previous one within its grace period,
 * compared in constant time), then expiry.
 * @param nowMs current time, epoch milliseconds
 * @throws AckTokenError naming the problem
 */
export function verifyAckToken(token: string, keys: SigningKeys, nowMs: number): AckClaims {
  const opened = openToken(DOMAIN, token, keys, nowMs);
  if ('problem' in opened) throw new AckTokenError(opened.problem, REFUSED[opened.problem]);
  const claims = parseClaims(opened.body);
  if (claims.expiresAt * 1000 <= nowMs)
    throw new AckTokenError(
      'expired',
      `This acknowledgement link expired at ${new Date(claims.expiresAt * 1000).toISOString()}.`,
    );
  return claims;
}

/** Reads a payload whose signature already matched; a bad shape here means a bug or an old format. */
function parseClaims(json: unknown): AckClaims {
  if (json === undefined) throw new AckTokenError('malformed', 'This acknowledgement link could not be read.');
  const body = (json ?? {}) as {
    v?: unknown;
    f?: unknown;
    g?: unknown;
    c?: unknown;
    iat?: unknown;
    exp?: unknown;
    s?: unknown;
    n?: unknown;
    st?: unknown;
    l?: unknown;
  };
  const fingerprints = Array.isArray(body.f)
    ? body.f.filter((f): f is string => typeof f === 'string' && f.length > 0)
    : [];
  if (
    body.v !== 1 ||
    fingerprints.length === 0 ||
    typeof body.g !== 'string' ||
    typeof body.c !== 'string' ||
    typeof body.iat !== 'number' ||
    typeof body.exp !== 'number'
  ) {
    throw new AckTokenError('malformed', 'This acknowledgement link has an unknown format.');
  }
  const claims: AckClaims = { fingerprints, group: body.g, channel: body.c, issuedAt: body.iat, expiresAt: body.exp };
  if (typeof body.st === 'number' && Number.isSafeInteger(body.st)) claims.startsAt = body.st;
  if (body.l === 'zh-CN') claims.locale = body.l;
  if (
    typeof body.s === 'string' &&
    /^[0-9a-f]{32}$/.test(body.s) &&
    typeof body.n === 'number' &&
    Number.isSafeInteger(body.n) &&
    body.n > 0
  )
    claims.set = { id: body.s, alerts: body.n };
  return claims;
}
