/**
 * The acknowledgement page: small, static HTML with no script, every value escaped (`escape.ts`), readable on a
 * phone (375 px wide: nothing is wider than the screen, long values wrap). The stylesheet is inline and
 * allowed by its hash, so the content security policy can forbid everything else but the chart
 * images (the signed chart URLs under `PUBLIC_URL/v1/chart/`, when charts are on). Each alert's section is `page-alert.ts`.
 * @see https://www.w3.org/TR/CSP3/
 */
import { createHash } from 'node:crypto';
import type { FormNonce } from './csrf.js';
import type { AlertAckResult } from './acknowledge.js';
import { raw } from 'hono/html';
import { h, type Html, isolateHtml, isolateText, joinHtml } from './escape.js';
import { alertSection, type PageAlert } from './page-alert.js';
import { count } from '../render/locale.js';
import { KEY_LABELS } from '../render/content.js';
import type { Locale } from '../core/locale.js';
import { pageWords, type PageWords } from './page-words.js';

export type { PageAlert };

const STYLE = [
  'body{font:16px/1.45 system-ui,sans-serif;margin:0;background:#f6f7f9;color:#1d2330;overflow-wrap:anywhere}',
  'main{max-width:40rem;margin:1rem auto;padding:0 .75rem}',
  'h3{font-size:.95rem;margin:.6rem 0 .2rem}ul.evidence{padding-left:1.1rem;margin:.2rem 0}.cause{border-left:3px solid #dc6803;padding-left:.6rem}',
  'figure{margin:.6rem 0}img{max-width:100%;height:auto;display:block}.links a{display:inline-block;padding:.25rem 0}nav.pages{margin:.8rem 0}',
  'section{background:#fff;border:1px solid #d8dce3;border-radius:8px;padding:.8rem 1rem;margin:.8rem 0}',
  'h1{font-size:1.35rem}h2{font-size:1.05rem;margin:.1rem 0 .4rem}.muted{color:#5b6475;font-size:.9rem}',
  '.firing{color:#b42318}.resolved{color:#067647}.acked{color:#175cd3}.notice{border-color:#175cd3}.error{border-color:#b42318}',
  'label{display:block;margin:.4rem 0}input,select,button{font:inherit;padding:.35rem .6rem}',
  'button{border-radius:6px;border:1px solid #175cd3;background:#175cd3;color:#fff;cursor:pointer;margin:.3rem .3rem 0 0}',
  'button.secondary{background:#fff;color:#175cd3}',
].join('');

function csp(images?: string): string {
  const img = images ? ` img-src ${images};` : '';
  return `default-src 'none';${img} style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`;
}

/** The page's security headers: no caching or indexing (the URL is a capability), no script, no framing, no referrer to other sites. */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'x-robots-tag': 'noindex, nofollow',
  'content-security-policy': csp(),
  // Not `no-referrer`: browsers then send `Origin: null` on the form's POST, which the CSRF check accepts only
  // with `Sec-Fetch-Site: same-origin`; a browser that sends no fetch metadata would be refused.
  'referrer-policy': 'same-origin',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
};

function layout(title: string, body: Html, w: PageWords): Html {
  return h`<!doctype html><html lang="${w.lang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><meta name="robots" content="noindex,nofollow"><title>${title}</title><style>${raw(STYLE)}</style></head><body><main>${body}</main></body></html>`;
}

export interface PageModel {
  alerts: PageAlert[];
  /** The channel whose link this is. */
  channel: string;
  /** Present when at least one alert can still be acknowledged. */
  form?: { nonce: FormNonce; name: string; silenceHours?: readonly number[] };
  /** After a POST: what it did. */
  result?: { alerts: AlertAckResult[]; followUps: Record<string, boolean> };
  /**
   * After a POST on an alert set's link: its acknowledgement, started by this request (`started`) or
   * decided before by `by` at `at` (RFC 3339).
   */
  setAck?: { total: number; by: string; at: string; started: boolean; silenceHours?: number };
  nowMs: number;
  /**
   * A list longer than one page (a storm digest's link): `alerts` is page `page` (1-based) of `pages`,
   * out of `total` alerts the form acknowledges together. `partial`: the link names a stored set that
   * could not be found, so only the alerts the link itself carries are listed (and acknowledged).
   */
  list?: { total: number; page: number; pages: number; partial?: { named: number } };
  /** `GRAFANA_URL`: each alert links to the dashboard around its start; unset: no such link. */
  grafanaUrl?: string;
  /** The page's language (the link's channel's, else the browser's); default `en`. */
  locale?: Locale;
}

/** Results listed one by one up to this many; a longer result is counted by outcome, and only what was not acknowledged is listed. */
const MAX_RESULT_ITEMS = 20;

/**
 * One result's alert as messages name it: alertname and its key labels (`KEY_LABELS`: model,
 * instance…), each isolated; summaries alone repeat across a storm. Its fingerprint when unknown here.
 */
function resultName(r: AlertAckResult): Html {
  if (!('record' in r)) return isolateHtml(r.fingerprint);
  const labels = r.record.alert.labels;
  const keys = KEY_LABELS.filter((name) => labels[name]).map((name) => h`${name}: ${isolateHtml(labels[name] ?? '')}`);
  return joinHtml(
    [isolateHtml(labels.alertname || r.record.alert.annotations.summary || r.fingerprint), ...keys],
    ' · ',
  );
}

function resultSection(result: NonNullable<PageModel['result']>, w: PageWords): Html {
  const many = result.alerts.length > MAX_RESULT_ITEMS;
  const listed = many
    ? result.alerts.filter((r) => r.outcome !== 'acknowledged' || r.silence).slice(0, MAX_RESULT_ITEMS)
    : result.alerts;
  const items = listed.map((r) => {
    const silence = r.silence
      ? 'id' in r.silence
        ? w.silenced(h`<code>${isolateHtml(r.silence.id)}</code>`)
        : w.silenceFailed(isolateHtml(r.silence.error))
      : undefined;
    return h`<li>${resultName(r)}${w.colon}${w.result[r.outcome].one}${silence}</li>`;
  });
  const counts = new Map<AlertAckResult['outcome'], number>();
  for (const r of result.alerts) counts.set(r.outcome, (counts.get(r.outcome) ?? 0) + 1);
  const counted = [...counts].map(([o, n]) => `${count(n)} ${w.result[o][n === 1 ? 'one' : 'other']}`).join(' · ');
  const summary = many && h`<p><strong>${w.resultCount(result.alerts.length)}</strong>${w.colon}${counted}</p>`;
  const sent = Object.entries(result.followUps).map(([c, ok]) => h`${w.notified(c, ok)}`);
  const failed =
    result.alerts.some((r) => r.silence && 'error' in r.silence) || Object.values(result.followUps).includes(false);
  return h`<section class="${failed ? 'error' : 'notice'}">${summary}${items.length > 0 && h`<ul>${items}</ul>`}${
    sent.length > 0 && h`<p class="muted">${w.channels(joinHtml(sent, w.lang === 'en' ? ', ' : '，'))}</p>`
  }</section>`;
}

/** What an alert set's "Acknowledge all" did: started it, or found it decided before. */
function setAckSection(set: NonNullable<PageModel['setAck']>, w: PageWords): Html {
  const by = h`<strong>${isolateHtml(set.by)}</strong>`;
  const text = set.started
    ? w.setStarted(set.total, by, set.silenceHours)
    : w.setDecided(set.total, by, h`<time>${set.at}</time>`);
  return h`<section class="notice"><p>${text}</p></section>`;
}

/** The form; its button names how many alerts it acknowledges when more than one (a long list: all pages, not only this one). */
function formSection(form: NonNullable<PageModel['form']>, total: number, w: PageWords): Html {
  const options = form.silenceHours?.map((hours) => h`<option value="${hours}">${w.hours(hours)}</option>`) ?? [];
  const silence =
    options.length > 0 &&
    h`<label>${w.silenceFor} <select name="hours">${options}</select></label><button type="submit" name="action" value="ack-silence" class="secondary">${w.ackAndSilence}</button>`;
  return h`<section><form method="post"><input type="hidden" name="nonce" value="${form.nonce.nonce}"><input type="hidden" name="mac" value="${form.nonce.mac}"><label>${w.yourName} <input name="name" maxlength="64" autocomplete="name" value="${form.name}" placeholder="${w.namePlaceholder}" dir="auto"></label><button type="submit" name="action" value="ack">${w.acknowledge(total)}</button>${silence}</form></section>`;
}

/** Previous/next links of a long list; relative (`?page=N`), so they stay on the link's own path. */
function pagesNav(list: NonNullable<PageModel['list']>, w: PageWords): Html {
  const prev = list.page > 1 && h`<a href="?page=${list.page - 1}">${w.previous}</a> · `;
  const next = list.page < list.pages && h` · <a href="?page=${list.page + 1}">${w.next}</a>`;
  return h`<nav class="pages">${prev}${w.pageOf(list.page, list.pages)}${next}</nav>`;
}

/** The confirmation page (GET) or the result page (POST), as an HTML document. */
export function renderAckPage(model: PageModel): string {
  const w = pageWords(model.locale);
  const list = model.list;
  const n = list?.total ?? model.alerts.length;
  const scope = list && h`<p class="muted">${list.partial ? w.partial(list.total, list.partial.named) : w.all(n)}</p>`;
  const heading = h`<h1>${w.heading(n)}</h1><p class="muted">${w.linkFrom(model.channel)} ${model.form ? w.opening : w.nothingLeft}</p>${scope}`;
  const nav = list && list.pages > 1 ? pagesNav(list, w) : undefined;
  const form = model.form && formSection(model.form, list?.partial ? list.partial.named : n, w);
  const body = h`${heading}${model.result && resultSection(model.result, w)}${model.setAck && setAckSection(model.setAck, w)}${nav && form}${nav}${model.alerts.map(
    (a) => alertSection(a, model.nowMs, model.grafanaUrl, model.locale),
  )}${nav}${!nav && form}`;
  const name = model.alerts[0]?.record?.alert.labels.alertname;
  return layout(w.title(name ? isolateText(name) : undefined), body, w).toString();
}

/** A refusal page (bad token, forged form): a heading and one sentence, in `locale` (default `en`), as an HTML document. */
export function renderProblemPage(heading: string, message: string, locale?: Locale): string {
  return layout(
    heading,
    h`<h1>${heading}</h1><section class="error"><p>${message}</p></section>`,
    pageWords(locale),
  ).toString();
}

/**
 * {@link PAGE_HEADERS} allowing images from `images` only: the chart route's URL prefix
 * (`PUBLIC_URL/v1/chart/`), not the whole origin, so the browser's own `/favicon.ico` request stays
 * blocked (behind a reverse proxy it would leave the service's path prefix).
 */
export function pageHeaders(images: string | undefined): Readonly<Record<string, string>> {
  return images ? { ...PAGE_HEADERS, 'content-security-policy': csp(images) } : PAGE_HEADERS;
}
