/**
 * HTTP routes of the acknowledgement page, mounted at `/v1/ack` (see `shared/http/app.ts`):
 * - `GET /v1/ack/:token` shows the alerts and a form, and changes no state (link unfurlers, mail
 *   scanners and prefetchers fetch links on their own);
 * - `POST /v1/ack/:token` acknowledges, behind the CSRF checks of `csrf.ts`.
 * Refusals are small HTML pages with a 4xx status; every page carries {@link PAGE_HEADERS}.
 */
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { getCookie, setCookie } from 'hono/cookie';
import { acknowledge, type AcknowledgeDeps } from './acknowledge.js';
import { CSRF_COOKIE, checkFormNonce, checkOrigin, issueFormNonce } from './csrf.js';
import { latestCoveredStart, type AckLinks } from './links.js';
import type { ChartLinkSettings } from '../chart/url.js';
import { PAGE_HEADERS, renderAckPage, renderProblemPage, type PageModel } from './page.js';
import { SILENCE_HOURS } from '../alertmanager/silences.js';
import { AckTokenError, TOKEN_PROBLEM_STATUS, verifyAckToken, type AckClaims } from './token.js';

/** Cookie remembering the name typed on this browser. */
export const NAME_COOKIE = 'ack_name';
/** Longest accepted name, characters. */
export const MAX_NAME_CHARS = 64;
/** The form is a few short fields. */
const MAX_FORM_BYTES = 8 * 1024;
const NAME_COOKIE_MAX_AGE_SECONDS = 365 * 24 * 3600;

export interface AckRouteDeps extends AcknowledgeDeps {
  links: AckLinks;
  /** Signs the alerts' chart URLs (`chartUrl` of `shared/chart/url.ts`) when `PROMETHEUS_URL` is set too; unset: no chart. */
  charts?: ChartLinkSettings;
}

type Page = { status: 200 | 400 | 403 | 405 | 410 | 503; html: string };

/** Trims, drops control characters and collapses spaces; `''` when nothing is left. */
export function cleanName(raw: unknown): string {
  if (typeof raw !== 'string') return '';
  return raw.replace(/[\p{Cc}\p{Cf}]/gu, ' ').replace(/\s+/g, ' ').trim().slice(0, MAX_NAME_CHARS);
}

const problem = (status: Page['status'], heading: string, message: string): Page => ({ status, html: renderProblemPage(heading, message) });

/** Builds the sub-app for `ACK_PATH`. */
export function ackRoutes(deps: AckRouteDeps): Hono {
  const pages = new AckPages(deps);
  const app = new Hono();
  const tooLarge = (c: Context) => send(c, problem(400, 'Form too large', 'The form is larger than this page ever sends.'));
  app.get('/:token', (c) => pages.answer(c, () => pages.view(c)));
  app.post('/:token', bodyLimit({ maxSize: MAX_FORM_BYTES, onError: tooLarge }), (c) => pages.answer(c, () => pages.submit(c)));
  app.all('/:token', (c) => {
    c.header('allow', 'GET, HEAD, POST');
    return send(c, problem(405, 'Method not allowed', 'Open the link in a browser.'));
  });
  return app;
}

const send = (c: Context, page: Page) => c.html(page.html, page.status, PAGE_HEADERS);

/** The two pages of one link: the view (GET) and the form's submit (POST). */
class AckPages {
  readonly #secure: boolean;
  constructor(private readonly deps: AckRouteDeps) {
    this.#secure = deps.links.settings.publicUrl.startsWith('https:');
  }

  /** Sends what `handler` renders; a store failure becomes a 503 page that says nothing changed. */
  async answer(c: Context, handler: () => Promise<Page>): Promise<Response> {
    try {
      return send(c, await handler());
    } catch (err) {
      this.deps.logger.error('ack page failed', { method: c.req.method, error: err as Error });
      return send(c, problem(503, 'Try again', 'The acknowledgement store could not be reached. Nothing was changed; reload in a moment.'));
    }
  }

  async view(c: Context): Promise<Page> {
    const token = c.req.param('token')!;
    const claims = this.#verify(token);
    return 'html' in claims ? claims : this.#page(c, token, claims, {});
  }

  async submit(c: Context): Promise<Page> {
    const token = c.req.param('token')!;
    const claims = this.#verify(token);
    if ('html' in claims) return claims;
    const crossSite = checkOrigin({ origin: c.req.header('origin'), secFetchSite: c.req.header('sec-fetch-site') }, [this.deps.links.origin, new URL(c.req.url).origin]);
    if (crossSite) return problem(403, 'Not acknowledged', crossSite);
    const request = await this.#readForm(c, token);
    if ('html' in request) return request;
    const result = await acknowledge(claims, { by: request.name || 'anonymous', silenceHours: request.silenceHours }, this.deps);
    if (request.name) setCookie(c, NAME_COOKIE, request.name, { path: this.deps.links.pagePath, httpOnly: true, sameSite: 'Lax', secure: this.#secure, maxAge: NAME_COOKIE_MAX_AGE_SECONDS });
    return this.#page(c, token, claims, { result, name: request.name });
  }

  #verify(token: string): AckClaims | Page {
    try {
      return verifyAckToken(token, this.deps.links.settings.keys, this.deps.now());
    } catch (err) {
      if (!(err instanceof AckTokenError)) throw err;
      return problem(TOKEN_PROBLEM_STATUS[err.problem], 'Link not valid', err.message);
    }
  }

  /** The form's fields, once its nonce matched its cookie. */
  async #readForm(c: Context, token: string): Promise<{ name: string; silenceHours?: number } | Page> {
    const form = await c.req.parseBody();
    const field = (name: string) => (typeof form[name] === 'string' ? (form[name] as string) : undefined);
    const forged = checkFormNonce({ nonce: field('nonce'), mac: field('mac'), cookie: getCookie(c, CSRF_COOKIE) }, token, this.deps.links.settings.keys, this.deps.now());
    if (forged) return problem(403, 'Not acknowledged', forged);
    const name = cleanName(field('name'));
    if (field('action') !== 'ack-silence') return { name };
    const silenceHours = Number(field('hours'));
    if (!this.deps.silences || !(SILENCE_HOURS as readonly number[]).includes(silenceHours)) {
      return problem(400, 'Not acknowledged', `Silences are offered for ${SILENCE_HOURS.join(', ')} hours when Alertmanager is configured.`);
    }
    return { name, silenceHours };
  }

  /** Renders the page with the alerts' current state; issues a fresh form nonce when something can be acknowledged. */
  async #page(c: Context, token: string, claims: AckClaims, extra: Pick<PageModel, 'result'> & { name?: string }): Promise<Page> {
    const now = this.deps.now();
    const records = await this.deps.store.getMany(claims.fingerprints, now);
    const alerts = claims.fingerprints.map((fingerprint) => ({ fingerprint, record: records.get(fingerprint) }));
    const open = alerts.some((a) => a.record?.status === 'firing' && !a.record.acknowledgement && Date.parse(a.record.startsAt) <= latestCoveredStart(claims.issuedAt));
    let form: PageModel['form'];
    if (open) {
      const nonce = issueFormNonce(token, this.deps.links.settings.keys);
      // Scoped to this link's public path: a second link opened in another tab must not replace this form's cookie.
      setCookie(c, CSRF_COOKIE, nonce.nonce, { path: `${this.deps.links.pagePath}/${token}`, httpOnly: true, sameSite: 'Strict', secure: this.#secure });
      form = { nonce, name: extra.name ?? cleanName(getCookie(c, NAME_COOKIE)), silenceHours: this.deps.silences ? SILENCE_HOURS : undefined };
    }
    return { status: 200, html: renderAckPage({ alerts, channel: claims.channel, form, result: extra.result, nowMs: now }) };
  }
}
