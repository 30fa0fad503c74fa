/**
 * The acknowledgement page: small, static HTML with no script, every value escaped, readable on a
 * phone (375 px wide: nothing is wider than the screen, long values wrap). The stylesheet is inline and
 * allowed by its hash, so the content security policy can forbid everything else but the chart
 * images (the signed chart URLs under `PUBLIC_URL/v1/chart/`, when charts are on). Each alert's section is `page-alert.ts`.
 * @see https://www.w3.org/TR/CSP3/
 */
import { createHash } from 'node:crypto';
import type { FormNonce } from './csrf.js';
import type { AlertAckResult } from './acknowledge.js';
import { escapeHtml, isolateHtml, isolateText } from './escape.js';
import { alertSection, type PageAlert } from './page-alert.js';
import { count } from '../render/locale.js';
import { KEY_LABELS } from '../render/content.js';

export { escapeHtml };
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
  // Not `no-referrer`: browsers then send `Origin: null` on the form's POST, which the CSRF check refuses.
  'referrer-policy': 'same-origin',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
};

function layout(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
    `<meta name="robots" content="noindex,nofollow"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head>` +
    `<body><main>${body}</main></body></html>`;
}

export interface PageModel {
  alerts: PageAlert[];
  /** The channel whose link this is. */
  channel: string;
  /** Present when at least one alert can still be acknowledged. */
  form?: { nonce: FormNonce; name: string; silenceHours?: readonly number[] };
  /** After a POST: what it did. */
  result?: { alerts: AlertAckResult[]; followUps: Record<string, boolean> };
  nowMs: number;
  /**
   * A list longer than one page (a storm digest's link): `alerts` is page `page` (1-based) of `pages`,
   * out of `total` alerts the form acknowledges together. `partial`: the link names a stored set that
   * could not be found, so only the alerts the link itself carries are listed (and acknowledged).
   */
  list?: { total: number; page: number; pages: number; partial?: { named: number } };
  /** `GRAFANA_URL`: each alert links to the dashboard around its start; unset: no such link. */
  grafanaUrl?: string;
}

/** Results listed one by one up to this many; a longer result is counted by outcome, and only what was not acknowledged is listed. */
const MAX_RESULT_ITEMS = 20;

/** What happened to one alert (`one`) or to several (`other`: "3 were already acknowledged"). */
const RESULT_WORDS: Record<AlertAckResult['outcome'], { one: string; other: string }> = {
  acknowledged: { one: 'acknowledged', other: 'acknowledged' },
  'already acknowledged': { one: 'was already acknowledged', other: 'were already acknowledged' },
  resolved: { one: 'already resolved, nothing to acknowledge', other: 'already resolved, nothing to acknowledge' },
  'newer occurrence': { one: 'has fired again since this link was sent; use the newer message', other: 'have fired again since this link was sent; use the newer messages' },
  unknown: { one: 'unknown here', other: 'unknown here' },
};

/**
 * One result's alert as messages name it: alertname and its key labels (`KEY_LABELS`: model,
 * instance…), each isolated; summaries alone repeat across a storm. Its fingerprint when unknown here.
 */
function resultName(r: AlertAckResult): string {
  if (!('record' in r)) return isolateHtml(r.fingerprint);
  const labels = r.record.alert.labels;
  const keys = KEY_LABELS.filter((name) => labels[name]).map((name) => `${name}: ${isolateHtml(labels[name] ?? '')}`);
  return [isolateHtml(labels.alertname || r.record.alert.annotations.summary || r.fingerprint), ...keys].join(' · ');
}

function resultSection(result: NonNullable<PageModel['result']>): string {
  const many = result.alerts.length > MAX_RESULT_ITEMS;
  const listed = many ? result.alerts.filter((r) => r.outcome !== 'acknowledged' || r.silence).slice(0, MAX_RESULT_ITEMS) : result.alerts;
  const items = listed.map((r) => {
    const silence = r.silence ? ('id' in r.silence ? ` · silenced (<code>${isolateHtml(r.silence.id)}</code>)` : ` · silence failed: ${isolateHtml(r.silence.error)}`) : '';
    return `<li>${resultName(r)}: ${RESULT_WORDS[r.outcome].one}${silence}</li>`;
  });
  const counts = new Map<AlertAckResult['outcome'], number>();
  for (const r of result.alerts) counts.set(r.outcome, (counts.get(r.outcome) ?? 0) + 1);
  const summary = many ? `<p><strong>${count(result.alerts.length)} alerts</strong>: ${[...counts].map(([o, n]) => `${count(n)} ${RESULT_WORDS[o][n === 1 ? 'one' : 'other']}`).join(' · ')}</p>` : '';
  const sent = Object.entries(result.followUps).map(([c, ok]) => `${escapeHtml(c)} ${ok ? 'notified' : 'not notified (delivery failed)'}`).join(', ');
  const failed = result.alerts.some((r) => r.silence && 'error' in r.silence) || Object.values(result.followUps).includes(false);
  return `<section class="${failed ? 'error' : 'notice'}">${summary}${items.length ? `<ul>${items.join('')}</ul>` : ''}${sent ? `<p class="muted">Channels: ${sent}.</p>` : ''}</section>`;
}

/** The form; its button names how many alerts it acknowledges when more than one (a long list: all pages, not only this one). */
function formSection(form: NonNullable<PageModel['form']>, total: number): string {
  const silence = form.silenceHours?.length
    ? `<label>Silence for <select name="hours">${form.silenceHours.map((h) => `<option value="${h}">${h} hour${h === 1 ? '' : 's'}</option>`).join('')}</select></label>` +
      `<button type="submit" name="action" value="ack-silence" class="secondary">Acknowledge and silence</button>`
    : '';
  return `<section><form method="post"><input type="hidden" name="nonce" value="${escapeHtml(form.nonce.nonce)}"><input type="hidden" name="mac" value="${escapeHtml(form.nonce.mac)}">` +
    `<label>Your name <input name="name" maxlength="64" autocomplete="name" value="${escapeHtml(form.name)}" placeholder="on-call engineer" dir="auto"></label>` +
    `<button type="submit" name="action" value="ack">${total > 1 ? `Acknowledge all ${count(total)}` : 'Acknowledge'}</button>${silence}</form></section>`;
}

/** Previous/next links of a long list; relative (`?page=N`), so they stay on the link's own path. */
function pagesNav(list: NonNullable<PageModel['list']>): string {
  const prev = list.page > 1 ? `<a href="?page=${list.page - 1}">← Previous</a> · ` : '';
  const next = list.page < list.pages ? ` · <a href="?page=${list.page + 1}">Next →</a>` : '';
  return `<nav class="pages">${prev}Page ${list.page} of ${list.pages}${next}</nav>`;
}

/** The confirmation page (GET) or the result page (POST). */
export function renderAckPage(model: PageModel): string {
  const list = model.list;
  const n = list?.total ?? model.alerts.length;
  const scope = list ? `<p class="muted">${list.partial ? `This link's list of ${count(list.total)} alerts could not be read; shown and acknowledged here: the ${count(list.partial.named)} it names itself.` : `All ${count(n)} firing alerts the message carried; the button acknowledges them together.`}</p>` : '';
  const heading = `<h1>Acknowledge ${n === 1 ? 'alert' : `${count(n)} alerts`}</h1><p class="muted">Link from the ${escapeHtml(model.channel)} message. ${model.form ? 'Opening this page changes nothing; only the button below acknowledges.' : 'Nothing is left to acknowledge here.'}</p>${scope}`;
  const nav = list && list.pages > 1 ? pagesNav(list) : '';
  const form = model.form ? formSection(model.form, list?.partial ? list.partial.named : n) : '';
  const body = [heading, model.result ? resultSection(model.result) : '', form && nav ? form : '', nav, ...model.alerts.map((a) => alertSection(a, model.nowMs, model.grafanaUrl)), nav, form && !nav ? form : ''];
  const name = model.alerts[0]?.record?.alert.labels.alertname;
  return layout(`Acknowledge${name ? `: ${isolateText(name)}` : ''}`, body.join(''));
}

/** A refusal page (bad token, forged form): a heading and one sentence. */
export function renderProblemPage(heading: string, message: string): string {
  return layout(heading, `<h1>${escapeHtml(heading)}</h1><section class="error"><p>${escapeHtml(message)}</p></section>`);
}

/**
 * {@link PAGE_HEADERS} allowing images from `images` only: the chart route's URL prefix
 * (`PUBLIC_URL/v1/chart/`), not the whole origin, so the browser's own `/favicon.ico` request stays
 * blocked (behind a reverse proxy it would leave the service's path prefix).
 */
export function pageHeaders(images: string | undefined): Readonly<Record<string, string>> {
  return images ? { ...PAGE_HEADERS, 'content-security-policy': csp(images) } : PAGE_HEADERS;
}
