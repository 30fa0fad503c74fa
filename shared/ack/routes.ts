/**
 * HTTP routes of the acknowledgement page, mounted at `/v1/ack` (see `shared/http/app.ts`):
 * - `GET /v1/ack/:token[?page=N]` shows the alerts (their evidence, cause, chart and links: `page-alert.ts`)
 *   and a form, and changes no state (link unfurlers, mail scanners and prefetchers fetch links on their own);
 * - `POST /v1/ack/:token` acknowledges every alert the link names together, behind the CSRF checks of `csrf.ts`.
 * A storm digest's link names a stored alert set (`AckClaims.set`): the page lists it {@link PAGE_SIZE} at a
 * time, and the form acknowledges the whole set.
 * Refusals are small HTML pages with a 4xx status; every page carries `pageHeaders` (`PAGE_HEADERS`, chart images allowed).
 */
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { getCookie, setCookie } from 'hono/cookie';
import { acknowledge, type AcknowledgeDeps } from './acknowledge.js';
import { CSRF_COOKIE, checkFormNonce, checkOrigin, issueFormNonce } from './csrf.js';
import type { FormNonceStore } from '../store/form-nonces.js';
import { coversFiring, type AckLinks } from './links.js';
import { CHART_PATH, type ChartLinkSettings } from '../chart/url.js';
import { PageAlerts, type PageAlertDeps } from './page-alerts.js';
import { pageHeaders, renderAckPage, renderProblemPage, type PageAlert, type PageModel } from './page.js';
import { linkScope, type Scope } from './scope.js';
import { SILENCE_HOURS } from '../alertmanager/silences.js';
import { sentByGrafana } from '../alertmanager/grafana.js';
import { TOKEN_PROBLEM_STATUS } from '../core/signed-token.js';
import { AckTokenError, verifyAckToken, type AckClaims } from './token.js';
import { preferredLocale, type Locale } from '../core/locale.js';
import { pageWords } from './page-words.js';
import type { AckSetJobStore } from '../store/ack-set-jobs.js';
import { ACK_STEP_ALERTS, startSetAcknowledgement, type AckSetDeps, type AckSetDispatch } from './set-job.js';

/**
 * The page's language: Chinese when the link came from a zh-CN channel (its token says so) or the
 * browser prefers Chinese (`Accept-Language`), else English.
 */
export function pageLocale(claims: Pick<AckClaims, 'locale'> | undefined, acceptLanguage: string | undefined): Locale {
  return claims?.locale === 'zh-CN' || preferredLocale(acceptLanguage) === 'zh-CN' ? 'zh-CN' : 'en';
}

const localeOf = (c: Context, claims?: AckClaims): Locale => pageLocale(claims, c.req.header('accept-language'));

/** Cookie remembering the name typed on this browser. */
export const NAME_COOKIE = 'ack_name';
/** Longest accepted name, characters. */
export const MAX_NAME_CHARS = 64;
/** The form is a few short fields. */
const MAX_FORM_BYTES = 8 * 1024;
const NAME_COOKIE_MAX_AGE_SECONDS = 365 * 24 * 3600;
/** Alerts per page of a long list (a storm digest's link). */
export const PAGE_SIZE = 20;

export interface AckRouteDeps extends AcknowledgeDeps {
  links: AckLinks;
  /** The form's nonces, each taken once: a replayed POST changes nothing (`shared/store/form-nonces.ts`). */
  formNonces: FormNonceStore;
  /** Re-runs enrichment for the alerts shown (their values now): see {@link PageAlertDeps.refresh}. */
  refresh?: PageAlertDeps['refresh'];
  /** Signs the alerts' chart URLs (`chartUrl` of `shared/chart/url.ts`) when `PROMETHEUS_URL` is set too; unset: no chart. */
  charts?: ChartLinkSettings;
  /** `GRAFANA_URL`: each alert links to the dashboard around its start (`shared/render/grafana.ts`); unset: no such link. */
  grafanaUrl?: string;
  /**
   * Alert sets acknowledged as jobs (`set-job.ts`): the decision recorded, the steps dispatched, the answer
   * given at once. Unset: a set is acknowledged within the request, as a link of few alerts is.
   */
  setJobs?: {
    jobs: AckSetJobStore;
    dispatch: AckSetDispatch;
    sleep(ms: number): Promise<void>;
    /** Everything a step needs (the page's dependencies with these). */
    deps(): AckSetDeps;
  };
}

type Page = { status: 200 | 400 | 403 | 405 | 409 | 410 | 503; html: string };

/** Trims, drops control characters and collapses spaces; `''` when nothing is left. */
export function cleanName(raw: unknown): string {
  if (typeof raw !== 'string') return '';
  return raw
    .replace(/[\p{Cc}\p{Cf}]/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, MAX_NAME_CHARS);
}

const problem = (status: Page['status'], heading: string, message: string, locale?: Locale): Page => ({
  status,
  html: renderProblemPage(heading, message, locale),
});

/** Builds the sub-app for `ACK_PATH`. */
export function ackRoutes(deps: AckRouteDeps): Hono {
  const send = sender(deps.charts);
  const pages = new AckPages(deps, send);
  const app = new Hono();
  const tooLarge = (c: Context) => {
    const w = pageWords(localeOf(c)).problems;
    return send(c, problem(400, w.tooLarge, w.tooLargeText, localeOf(c)));
  };
  app.get('/:token', (c) => pages.answer(c, () => pages.view(c)));
  app.post('/:token', bodyLimit({ maxSize: MAX_FORM_BYTES, onError: tooLarge }), (c) =>
    pages.answer(c, () => pages.submit(c)),
  );
  app.all('/:token', (c) => {
    c.header('allow', 'GET, HEAD, POST');
    const w = pageWords(localeOf(c)).problems;
    return send(c, problem(405, w.methodNotAllowed, w.openInBrowser, localeOf(c)));
  });
  return app;
}

/** Sends a page with its security headers; `charts` set: the chart images are allowed. */
const sender = (charts: ChartLinkSettings | undefined) => {
  const headers = pageHeaders(charts && `${charts.publicUrl}${CHART_PATH}/`);
  return (c: Context, page: Page) => c.html(page.html, page.status, headers);
};

/** The two pages of one link: the view (GET) and the form's submit (POST). */
class AckPages {
  readonly #secure: boolean;
  readonly #alerts: PageAlerts;
  constructor(
    private readonly deps: AckRouteDeps,
    private readonly send: (c: Context, page: Page) => Response,
  ) {
    this.#secure = deps.links.settings.publicUrl.startsWith('https:');
    this.#alerts = new PageAlerts(deps);
  }

  /** Sends what `handler` renders; a store failure becomes a 503 page that says nothing changed. */
  async answer(c: Context, handler: () => Promise<Page>): Promise<Response> {
    try {
      return this.send(c, await handler());
    } catch (err) {
      this.deps.logger.error('ack page failed', { method: c.req.method, error: err as Error });
      const w = pageWords(localeOf(c)).problems;
      return this.send(c, problem(503, w.tryAgain, w.storeDown, localeOf(c)));
    }
  }

  async view(c: Context): Promise<Page> {
    const token = c.req.param('token')!;
    const claims = this.#verify(c, token);
    return 'html' in claims ? claims : this.#page(c, token, claims, {});
  }

  async submit(c: Context): Promise<Page> {
    const token = c.req.param('token')!;
    const claims = this.#verify(c, token);
    if ('html' in claims) return claims;
    const locale = localeOf(c, claims);
    const crossSite = checkOrigin({ origin: c.req.header('origin'), secFetchSite: c.req.header('sec-fetch-site') }, [
      this.deps.links.origin,
      new URL(c.req.url).origin,
    ]);
    if (crossSite) return problem(403, pageWords(locale).problems.notAcknowledged, crossSite, locale);
    const request = await this.#takeForm(c, { token, expiresAt: claims.expiresAt }, locale);
    if ('html' in request) return request;
    const scope = await linkScope(
      claims,
      { sets: this.deps.links.sets, logger: this.deps.logger },
      PAGE_SIZE,
      this.deps.now(),
    );
    // A set larger than one step is acknowledged as a job (bounded work per Lambda invocation); a smaller
    // one within the request, so the page can say what happened to each alert.
    const setJobs = this.deps.setJobs;
    const stepAlerts = setJobs?.deps().stepAlerts ?? ACK_STEP_ALERTS;
    if (claims.set && setJobs && scope.fingerprints.length > stepAlerts)
      return this.#startSet(c, { token, claims: { ...claims, set: claims.set } }, request, setJobs);
    const result = await acknowledge(
      { ...claims, fingerprints: scope.fingerprints },
      { by: request.name || 'anonymous', silenceHours: request.silenceHours },
      this.deps,
    );
    if (claims.set) this.#setAcknowledged(claims, request.name, { alerts: scope.fingerprints.length, result });
    this.#rememberName(c, request.name);
    return this.#page(c, token, claims, { result, name: request.name, scope });
  }

  /** Logs a set acknowledged within the request (`alert set acknowledged`): how many of its alerts this click took. */
  #setAcknowledged(
    claims: AckClaims,
    name: string,
    { alerts, result }: { alerts: number; result: Awaited<ReturnType<typeof acknowledge>> },
  ): void {
    this.deps.logger.info('alert set acknowledged', {
      set: claims.set?.id,
      group: claims.group,
      channel: claims.channel,
      by: name || 'anonymous',
      alerts,
      acknowledged: result.alerts.filter((r) => r.outcome === 'acknowledged').length,
    });
  }

  /** "Acknowledge all N" of an alert set: recorded and dispatched (`set-job.ts`); the page says so. */
  async #startSet(
    c: Context,
    { token, claims }: { token: string; claims: AckClaims & { set: NonNullable<AckClaims['set']> } },
    request: { name: string; silenceHours?: number },
    setJobs: NonNullable<AckRouteDeps['setJobs']>,
  ): Promise<Page> {
    const by = request.name || 'anonymous';
    const { job, started } = await startSetAcknowledgement(
      claims,
      { by, silenceHours: request.silenceHours },
      setJobs.deps(),
    );
    this.deps.logger.info('alert set acknowledgement', {
      set: job.id,
      group: claims.group,
      channel: claims.channel,
      by,
      alerts: job.total,
      ...(started ? { started: true } : { decidedBy: job.by, decidedAt: job.at }),
    });
    this.#rememberName(c, request.name);
    const setAck = { total: job.total, by: job.by, at: job.at, started, silenceHours: job.silenceHours };
    return this.#page(c, token, claims, { setAck, name: request.name });
  }

  #rememberName(c: Context, name: string): void {
    if (name)
      setCookie(c, NAME_COOKIE, name, {
        path: this.deps.links.pagePath,
        httpOnly: true,
        sameSite: 'Lax',
        secure: this.#secure,
        maxAge: NAME_COOKIE_MAX_AGE_SECONDS,
      });
  }

  #verify(c: Context, token: string): AckClaims | Page {
    try {
      return verifyAckToken(token, this.deps.links.settings.keys, this.deps.now());
    } catch (err) {
      if (!(err instanceof AckTokenError)) throw err;
      const locale = localeOf(c);
      const w = pageWords(locale).problems;
      // English keeps the token's own message (it dates an expiry); other languages say the same in their words.
      const message = locale === 'en' ? err.message : w.token[err.problem];
      return problem(TOKEN_PROBLEM_STATUS[err.problem], w.linkNotValid, message, locale);
    }
  }

  /**
   * The form's fields, once its nonce matched its cookie and was taken: last before acting, so a form refused
   * for its fields can be sent again, and a replay of one taken finds it taken (409, nothing changed).
   */
  async #takeForm(
    c: Context,
    link: { token: string; expiresAt: number },
    locale: Locale,
  ): Promise<{ name: string; silenceHours?: number } | Page> {
    const request = await this.#readForm(c, link.token, locale);
    if ('html' in request || (await this.deps.formNonces.take(request.nonce, link.expiresAt * 1000))) return request;
    const w = pageWords(locale).problems;
    return problem(409, w.notAcknowledged, w.formUsed, locale);
  }

  /** The form's fields, once its nonce matched its cookie. */
  async #readForm(
    c: Context,
    token: string,
    locale: Locale,
  ): Promise<{ nonce: string; name: string; silenceHours?: number } | Page> {
    const w = pageWords(locale).problems;
    const form = await c.req.parseBody();
    const field = (name: string) => (typeof form[name] === 'string' ? (form[name] as string) : undefined);
    const forged = checkFormNonce(
      { nonce: field('nonce'), mac: field('mac'), cookie: getCookie(c, CSRF_COOKIE) },
      token,
      this.deps.links.settings.keys,
      this.deps.now(),
    );
    if (forged) return problem(403, w.notAcknowledged, forged, locale);
    const nonce = field('nonce')!;
    const name = cleanName(field('name'));
    if (field('action') !== 'ack-silence') return { nonce, name };
    const silenceHours = Number(field('hours'));
    if (!this.deps.silences || !(SILENCE_HOURS as readonly number[]).includes(silenceHours)) {
      return problem(400, w.notAcknowledged, w.silenceHours(SILENCE_HOURS), locale);
    }
    return { nonce, name, silenceHours };
  }

  /** Renders the page with the alerts' current state; issues a fresh form nonce when something can be acknowledged. */
  async #page(
    c: Context,
    token: string,
    claims: AckClaims,
    extra: Pick<PageModel, 'result' | 'setAck'> & { name?: string; scope?: Scope },
  ): Promise<Page> {
    const now = this.deps.now();
    const scope =
      extra.scope ??
      (await linkScope(claims, { sets: this.deps.links.sets, logger: this.deps.logger }, PAGE_SIZE, this.deps.now()));
    const pages = Math.max(1, Math.ceil(scope.fingerprints.length / PAGE_SIZE));
    const page = scope.list ? pageNumber(c.req.query('page'), pages) : 1;
    const shown = scope.list ? scope.fingerprints.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE) : scope.fingerprints;
    const alerts = await this.#alerts.read(shown, now, localeOf(c, claims));
    // A long list may have open alerts on other pages: its form stays (the result then says what each was).
    const open =
      alerts.some((a) => a.record && coversFiring(a.record, claims)) || (pages > 1 && !extra.result && !extra.setAck);
    const form = open ? this.#form(c, token, { alerts, name: extra.name }) : undefined;
    const list = scope.list && { ...scope.list, page, pages };
    return {
      status: 200,
      html: renderAckPage({
        alerts,
        channel: claims.channel,
        form,
        result: extra.result,
        setAck: extra.setAck,
        nowMs: now,
        list,
        grafanaUrl: this.deps.grafanaUrl,
        locale: localeOf(c, claims),
      }),
    };
  }

  /** The form, with a fresh nonce in its cookie (scoped to this link's path: another tab's link keeps its own). */
  #form(c: Context, token: string, { alerts, name }: { alerts: PageAlert[]; name?: string }): PageModel['form'] {
    const nonce = issueFormNonce(token, this.deps.links.settings.keys);
    setCookie(c, CSRF_COOKIE, nonce.nonce, {
      path: `${this.deps.links.pagePath}/${token}`,
      httpOnly: true,
      sameSite: 'Strict',
      secure: this.#secure,
    });
    // Alerts Grafana sent are silenced in Grafana (their link): Alertmanager's silence would match nothing.
    const silenceable = this.deps.silences && alerts.some((a) => a.record && !sentByGrafana(a.record.alert));
    return {
      nonce,
      name: name ?? cleanName(getCookie(c, NAME_COOKIE)),
      silenceHours: silenceable ? SILENCE_HOURS : undefined,
    };
  }
}

/** `?page=N` as a page number in 1…`pages`; anything else is page 1 (or the last, when past it). */
function pageNumber(raw: string | undefined, pages: number): number {
  const n = raw && /^\d{1,6}$/.test(raw) ? Number(raw) : 1;
  return Math.min(Math.max(n, 1), pages);
}
