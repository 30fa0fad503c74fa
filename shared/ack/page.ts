/**
 * The acknowledgement page: small, static HTML with no script, every value escaped. The stylesheet is
 * inline and allowed by its hash, so the content security policy can forbid everything else.
 * @see https://www.w3.org/TR/CSP3/
 */
import { createHash } from 'node:crypto';
import { formatTime } from '../render/format.js';
import { hasKnownStart } from '../alertmanager/schema.js';
import type { FormNonce } from './csrf.js';
import { elapsed } from '../render/elapsed.js';
import type { AlertAckResult } from './acknowledge.js';
import type { AlertRecord } from '../store/alert-record.js';

const STYLE = [
  'body{font:16px/1.45 system-ui,sans-serif;margin:0;background:#f6f7f9;color:#1d2330}',
  'main{max-width:40rem;margin:2rem auto;padding:0 1rem}',
  'section{background:#fff;border:1px solid #d8dce3;border-radius:8px;padding:.8rem 1rem;margin:.8rem 0}',
  'h1{font-size:1.35rem}h2{font-size:1.05rem;margin:.1rem 0 .4rem}.muted{color:#5b6475;font-size:.9rem}',
  '.firing{color:#b42318}.resolved{color:#067647}.acked{color:#175cd3}.notice{border-color:#175cd3}.error{border-color:#b42318}',
  'label{display:block;margin:.4rem 0}input,select,button{font:inherit;padding:.35rem .6rem}',
  'button{border-radius:6px;border:1px solid #175cd3;background:#175cd3;color:#fff;cursor:pointer;margin:.3rem .3rem 0 0}',
  'button.secondary{background:#fff;color:#175cd3}',
].join('');

/** The page's security headers: no caching or indexing (the URL is a capability), no script, no framing, no referrer to other sites. */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'x-robots-tag': 'noindex, nofollow',
  'content-security-policy': `default-src 'none'; style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
  // Not `no-referrer`: browsers then send `Origin: null` on the form's POST, which the CSRF check refuses.
  'referrer-policy': 'same-origin',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
};

/** Escapes text for HTML element content and double-quoted attributes. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

function layout(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
    `<meta name="robots" content="noindex,nofollow"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head>` +
    `<body><main>${body}</main></body></html>`;
}

/** What the page shows about one alert the link names. */
export interface PageAlert {
  fingerprint: string;
  record?: AlertRecord;
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
}

function alertSection(a: PageAlert, nowMs: number): string {
  const r = a.record;
  if (!r) return `<section><h2>Alert ${escapeHtml(a.fingerprint)}</h2><p class="muted">Unknown here: never notified by this service, or its record expired.</p></section>`;
  const labels = Object.entries(r.alert.labels).filter(([k]) => k !== 'alertname').map(([k, v]) => `${escapeHtml(k)}=${escapeHtml(v)}`).join(' · ');
  const title = r.alert.annotations.summary || r.alert.labels.alertname || 'alert';
  // An unknown start (AMP's default text sends none) is left out rather than shown as year 1.
  const known = hasKnownStart(r);
  const state = r.status === 'firing'
    ? `<span class="firing">Firing</span>${known ? ` since ${escapeHtml(formatTime(r.startsAt))} (${escapeHtml(elapsed(Date.parse(r.startsAt), nowMs))})` : ''}`
    : `<span class="resolved">Resolved</span> ${r.resolvedAt ? `at ${escapeHtml(formatTime(r.resolvedAt))}` : ''}${known ? ` · fired ${escapeHtml(formatTime(r.startsAt))}` : ''}`;
  const ack = r.acknowledgement;
  const ackLine = ack
    ? `<p class="acked">Acknowledged by <strong>${escapeHtml(ack.by)}</strong> at ${escapeHtml(formatTime(ack.at))}${known ? ` (${escapeHtml(elapsed(Date.parse(r.startsAt), Date.parse(ack.at)))} after it fired)` : ''}, from the ${escapeHtml(ack.channel)} link${ack.silenceId ? ` · silence <code>${escapeHtml(ack.silenceId)}</code>` : ''}</p>`
    : r.status === 'firing' ? '<p class="muted">Not acknowledged yet.</p>' : '';
  return `<section><h2>${escapeHtml(r.alert.labels.alertname ?? '')}${r.alert.labels.severity ? ` · ${escapeHtml(r.alert.labels.severity)}` : ''}</h2>` +
    `<p>${escapeHtml(title)}</p><p class="muted">${labels}</p><p>${state}</p>${ackLine}</section>`;
}

const RESULT_WORDS: Record<AlertAckResult['outcome'], string> = {
  acknowledged: 'acknowledged',
  'already acknowledged': 'was already acknowledged',
  resolved: 'already resolved, nothing to acknowledge',
  'newer occurrence': 'has fired again since this link was sent; use the newer message',
  unknown: 'unknown here',
};

function resultSection(result: NonNullable<PageModel['result']>): string {
  const items = result.alerts.map((r) => {
    const silence = r.silence ? ('id' in r.silence ? ` · silenced (<code>${escapeHtml(r.silence.id)}</code>)` : ` · silence failed: ${escapeHtml(r.silence.error)}`) : '';
    const name = 'record' in r ? r.record.alert.annotations.summary || r.record.alert.labels.alertname || r.fingerprint : r.fingerprint;
    return `<li>${escapeHtml(name)}: ${RESULT_WORDS[r.outcome]}${silence}</li>`;
  });
  const sent = Object.entries(result.followUps).map(([c, ok]) => `${escapeHtml(c)} ${ok ? 'notified' : 'not notified (delivery failed)'}`).join(', ');
  const failed = result.alerts.some((r) => r.silence && 'error' in r.silence) || Object.values(result.followUps).includes(false);
  return `<section class="${failed ? 'error' : 'notice'}"><ul>${items.join('')}</ul>${sent ? `<p class="muted">Channels: ${sent}.</p>` : ''}</section>`;
}

function formSection(form: NonNullable<PageModel['form']>): string {
  const silence = form.silenceHours?.length
    ? `<label>Silence for <select name="hours">${form.silenceHours.map((h) => `<option value="${h}">${h} hour${h === 1 ? '' : 's'}</option>`).join('')}</select></label>` +
      `<button type="submit" name="action" value="ack-silence" class="secondary">Acknowledge and silence</button>`
    : '';
  return `<section><form method="post"><input type="hidden" name="nonce" value="${escapeHtml(form.nonce.nonce)}"><input type="hidden" name="mac" value="${escapeHtml(form.nonce.mac)}">` +
    `<label>Your name <input name="name" maxlength="64" autocomplete="name" value="${escapeHtml(form.name)}" placeholder="on-call engineer"></label>` +
    `<button type="submit" name="action" value="ack">Acknowledge</button>${silence}</form></section>`;
}

/** The confirmation page (GET) or the result page (POST). */
export function renderAckPage(model: PageModel): string {
  const n = model.alerts.length;
  const heading = `<h1>Acknowledge ${n === 1 ? 'alert' : `${n} alerts`}</h1><p class="muted">Link from the ${escapeHtml(model.channel)} message. ${model.form ? 'Opening this page changes nothing; only the button below acknowledges.' : 'Nothing is left to acknowledge here.'}</p>`;
  const body = [heading, model.result ? resultSection(model.result) : '', ...model.alerts.map((a) => alertSection(a, model.nowMs)), model.form ? formSection(model.form) : ''];
  const name = model.alerts[0]?.record?.alert.labels.alertname;
  return layout(`Acknowledge${name ? `: ${name}` : ''}`, body.join(''));
}

/** A refusal page (bad token, forged form): a heading and one sentence. */
export function renderProblemPage(heading: string, message: string): string {
  return layout(heading, `<h1>${escapeHtml(heading)}</h1><section class="error"><p>${escapeHtml(message)}</p></section>`);
}
