/**
 * Cross-site request forgery defences of the acknowledgement form, in two independent layers:
 * - the browser's own word: a POST whose `Origin` is another site, or whose `Sec-Fetch-Site` says
 *   `cross-site`/`same-site`, is refused (Fetch Metadata);
 * - a per-page nonce, double-submitted: the page sets it in a `SameSite=Strict` cookie and puts it,
 *   with an HMAC-SHA256 binding it to the link's token under `ACK_SECRET`, into hidden form fields.
 *   A forged POST lacks the cookie, and cannot mint a MAC without the secret.
 *
 * @see https://cheatsheetseries.owasp.org/cheatsheets/Cross-Site_Request_Forgery_Prevention_Cheat_Sheet.html
 * @see https://www.w3.org/TR/fetch-metadata/
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Secret } from '../core/secret.js';
import type { SigningKeys } from '../core/signed-token.js';

/** Name of the cookie carrying the page's nonce. */
export const CSRF_COOKIE = 'ack_csrf';

/** The hidden fields of one rendered page. */
export interface FormNonce {
  /** Random, base64url, 128 bits; also the cookie's value. */
  nonce: string;
  /** base64url HMAC-SHA256 over the nonce and the token. */
  mac: string;
}

const sign = (key: Secret, nonce: string, token: string) =>
  createHmac('sha256', key.reveal()).update(`csrf.v1.${nonce}.${token}`).digest('base64url');

/** Mints the nonce for one page showing `token`, signed with the current key. */
export function issueFormNonce(token: string, keys: Pick<SigningKeys, 'current'>): FormNonce {
  const nonce = randomBytes(16).toString('base64url');
  return { nonce, mac: sign(keys.current, nonce, token) };
}

const same = (a: string, b: string) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/**
 * Checks a submitted form against its cookie.
 * @param submitted the form's `nonce` and `mac` fields and the cookie's value (any may be missing)
 * @param nowMs epoch milliseconds, for the previous key's grace period
 * @returns `undefined` when valid, else why not (shown on the 403 page)
 */
export function checkFormNonce(
  submitted: { nonce?: string; mac?: string; cookie?: string },
  token: string,
  keys: SigningKeys,
  nowMs: number,
): string | undefined {
  const { nonce, mac, cookie } = submitted;
  if (!nonce || !mac) return 'The form was not sent from the acknowledgement page.';
  if (!cookie || !same(cookie, nonce))
    return 'The form is missing its browser cookie; open the link again and use that page (cookies must be enabled).';
  const candidates = [keys.current, ...(keys.previous && nowMs < keys.previous.untilMs ? [keys.previous.secret] : [])];
  if (!candidates.some((key) => same(sign(key, nonce, token), mac)))
    return 'The form does not belong to this link; open the link again.';
  return undefined;
}

/**
 * Fetch-metadata and `Origin` check of a state-changing request. `Origin: null` (an opaque origin) is
 * allowed in one case only: with `Sec-Fetch-Site: same-origin`, which is what browsers send for the page's
 * own form when a proxy in front of us adds `Referrer-Policy: no-referrer` (the Fetch standard then
 * serialises the request's origin as `null`). A sandboxed frame, a `data:` page or a cross-site redirect
 * also yield `null`, but never with `same-origin`; and the form's nonce, its MAC and its cookie are
 * checked after this all the same ({@link checkFormNonce}). Rails accepts the same combination.
 * @see https://fetch.spec.whatwg.org/#serializing-a-request-origin
 * @param headers `origin` and `sec-fetch-site` as received (lower-case names)
 * @param allowedOrigins the service's own origins (`PUBLIC_URL`'s and the request URL's), e.g. `https://ack.example.com`
 * @returns `undefined` when allowed, else why not
 */
export function checkOrigin(
  headers: { origin?: string; secFetchSite?: string },
  allowedOrigins: string[],
): string | undefined {
  const site = headers.secFetchSite;
  if (site && site !== 'same-origin' && site !== 'none')
    return `The form was posted from another site (Sec-Fetch-Site: ${site}).`;
  const origin = headers.origin;
  if (origin && origin !== 'null' && !allowedOrigins.includes(origin))
    return 'The form was posted from another site (Origin does not match).';
  if (origin === 'null' && site !== 'same-origin') return 'The form was posted from an opaque origin.';
  return undefined;
}
