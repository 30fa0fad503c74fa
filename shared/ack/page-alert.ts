/**
 * One alert on the acknowledgement page, as the place to decide: what it is and its state, the
 * evidence (each signal when it fired, when the message went out, and now), the likely cause and what
 * to try, the chart, and the links onward (the rule's graph, Grafana, the runbook, the silence form).
 *
 * Where the evidence comes from: the values when fired and at notification, and the cause the message
 * gave, are the enrichment the alert record kept from the moment of sending (its existing write, no
 * extra request); "now" is a fresh Prometheus query made when the page is opened. Prometheus down at
 * that moment only leaves "now" out, with the reason. Every value is escaped; links pass `httpLink`.
 * Every text from the alert or a person is bidi-isolated (`isolateHtml`): one label value with a
 * right-to-left override must not reverse the labels after it.
 */
import { hasKnownStart } from '../alertmanager/schema.js';
import type { Enrichment, LikelyCause, Signal } from '../enrich/types.js';
import { formatMemoryTrend } from '../enrich/values.js';
import { alertLinks } from '../render/content.js';
import { elapsed } from '../render/elapsed.js';
import { formatLikelyCause, formatReading, formatTime } from '../render/format.js';
import type { AlertRecord } from '../store/alert-record.js';
import { truncateChars } from '../core/truncate.js';
import { escapeHtml, isolateHtml, isolateText } from './escape.js';

/** Longest description shown, characters (it is free text; the evidence matters more). */
const MAX_DESCRIPTION_CHARS = 1000;

/** What the page shows about one alert the link names. */
export interface PageAlert {
  fingerprint: string;
  record?: AlertRecord;
  /**
   * Its enrichment re-run when the page was opened (the values now); `undefined` when not asked
   * (a digest's long list) — then only what the record kept is shown.
   */
  fresh?: Enrichment;
  /** The signed URL of its chart (`<img>`), when charts are configured. */
  chartUrl?: string;
}

/**
 * One alert's section.
 * @param nowMs epoch milliseconds
 * @param grafanaBase `GRAFANA_URL`: the Grafana dashboard link around the alert's start; unset: none
 */
export function alertSection(a: PageAlert, nowMs: number, grafanaBase?: string): string {
  const r = a.record;
  if (!r) return `<section><h2>Alert ${isolateHtml(a.fingerprint)}</h2><p class="muted">Unknown here: never notified by this service, or its record expired.</p></section>`;
  const labels = Object.entries(r.alert.labels)
    .filter(([k]) => k !== 'alertname')
    .map(([k, v]) => `${isolateHtml(k)}=${isolateHtml(v)}`)
    .join(' · ');
  const title = r.alert.annotations.summary || r.alert.labels.alertname || 'alert';
  const description = r.alert.annotations.description ? `<p class="muted">${isolateHtml(truncateChars(r.alert.annotations.description, MAX_DESCRIPTION_CHARS))}</p>` : '';
  return (
    `<section><h2>${isolateHtml(r.alert.labels.alertname ?? '')}${r.alert.labels.severity ? ` · ${isolateHtml(r.alert.labels.severity)}` : ''}</h2>` +
    `<p>${isolateHtml(title)}</p><p class="muted">${labels}</p><p>${stateLine(r, nowMs)}</p>${ackLine(r)}` +
    `${evidence(r, a.fresh)}${causes(r.enrichment, a.fresh)}${chart(a)}${description}${links(a, grafanaBase)}</section>`
  );
}

function stateLine(r: AlertRecord, nowMs: number): string {
  // An unknown start (AMP's default text sends none) is left out rather than shown as year 1.
  const known = hasKnownStart(r);
  return r.status === 'firing'
    ? `<span class="firing">Firing</span>${known ? ` since ${escapeHtml(formatTime(r.startsAt))} (${escapeHtml(elapsed(Date.parse(r.startsAt), nowMs))})` : ''}`
    : `<span class="resolved">Resolved</span> ${r.resolvedAt ? `at ${escapeHtml(formatTime(r.resolvedAt))}` : ''}${known ? ` · fired ${escapeHtml(formatTime(r.startsAt))}` : ''}`;
}

function ackLine(r: AlertRecord): string {
  const ack = r.acknowledgement;
  if (!ack) return r.status === 'firing' ? '<p class="muted">Not acknowledged yet.</p>' : '';
  const after = hasKnownStart(r) ? ` (${escapeHtml(elapsed(Date.parse(r.startsAt), Date.parse(ack.at)))} after it fired)` : '';
  return `<p class="acked">Acknowledged by <strong>${isolateHtml(ack.by)}</strong> at ${escapeHtml(formatTime(ack.at))}${after}, from the ${escapeHtml(ack.channel)} link${ack.silenceId ? ` · silence <code>${isolateHtml(ack.silenceId)}</code>` : ''}</p>`;
}

/**
 * The signals, one line each: `TTFT p95: when fired 0.21 s · at notification 2.3 s · now 3.1 s`. Signals
 * the record kept come first, in its order; a signal only the fresh query has is added after them.
 */
function evidence(r: AlertRecord, fresh: Enrichment | undefined): string {
  const kept = r.enrichment?.status === 'enriched' ? r.enrichment.signals : [];
  const now = fresh?.status === 'enriched' ? new Map(fresh.signals.map((s) => [s.name, s])) : undefined;
  const names = new Set(kept.map((s) => s.name));
  const lines = [...kept.map((s) => signalLine(s, now?.get(s.name), r.notifiedAt)), ...[...(now?.values() ?? [])].filter((s) => !names.has(s.name)).map((s) => signalLine(undefined, s, r.notifiedAt))];
  const notes: string[] = [];
  if (fresh?.status === 'unavailable') notes.push(`Values now: unavailable (${fresh.reason}); shown as kept from the notification.`);
  if (!kept.length && r.enrichment?.status === 'unavailable' && !now?.size) notes.push(`When notified: ${r.enrichment.reason}.`);
  const trend = fresh?.status === 'enriched' && fresh.trend ? fresh.trend : r.enrichment?.status === 'enriched' ? r.enrichment.trend : undefined;
  if (trend) lines.push(`<li><strong>Memory trend</strong>: ${escapeHtml(formatMemoryTrend(trend))}${trend.sparkline ? ` <span class="spark">${escapeHtml(trend.sparkline)}</span>` : ''}</li>`);
  if (!lines.length && !notes.length) return '';
  return `<h3>Evidence</h3>${lines.length ? `<ul class="evidence">${lines.join('')}</ul>` : ''}${notes.map((n) => `<p class="muted">${escapeHtml(n)}</p>`).join('')}`;
}

/** One signal: when fired and at notification from the record's copy, now from the fresh one. */
function signalLine(kept: Signal | undefined, now: Signal | undefined, notifiedAt: string): string {
  const s = (kept ?? now)!;
  const atStart = kept?.atStart !== undefined ? kept.atStart : now?.atStart;
  const parts: string[] = [];
  if (atStart !== undefined) parts.push(`when fired ${escapeHtml(formatReading(atStart, s))}`);
  if (kept) parts.push(`<span title="${escapeHtml(formatTime(notifiedAt))}">at notification</span> ${escapeHtml(formatReading(kept.value, kept))}`);
  if (now) parts.push(`now <strong>${escapeHtml(formatReading(now.value, now))}</strong>`);
  return `<li><strong>${escapeHtml(s.label)}</strong>: ${parts.join(' · ')}</li>`;
}

/** The cause the message gave; and, when the evidence now points elsewhere, that one too. */
function causes(kept: Enrichment | undefined, fresh: Enrichment | undefined): string {
  const then = kept?.status === 'enriched' ? kept.likelyCause : undefined;
  const now = fresh?.status === 'enriched' ? fresh.likelyCause : undefined;
  const blocks: string[] = [];
  if (then) blocks.push(causeBlock(then, 'Likely cause (when notified)'));
  if (now && now.rule !== then?.rule) blocks.push(causeBlock(now, then ? 'Now the evidence points to' : 'Likely cause (now)'));
  return blocks.join('');
}

function causeBlock(cause: LikelyCause, heading: string): string {
  const [, evidenceLine, tryLine] = formatLikelyCause(cause);
  return (
    `<div class="cause"><h3>${escapeHtml(heading)}</h3><p><strong>${escapeHtml(cause.cause)}</strong></p>` +
    `<p class="muted">${escapeHtml(evidenceLine ?? '')}</p><p>${escapeHtml(tryLine ?? '')}</p></div>`
  );
}

function chart(a: PageAlert): string {
  if (!a.chartUrl || !a.record) return '';
  const name = a.record.alert.labels.alertname ?? 'alert';
  return `<figure><img src="${escapeHtml(a.chartUrl)}" alt="${escapeHtml(`Chart of ${isolateText(name)}: its main signal from before it fired to now`)}" loading="lazy"></figure>`;
}

/** Graph, Grafana, Runbook and Silence as messages show them (`alertLinks`: http(s) only). */
function links(a: PageAlert, grafanaBase: string | undefined): string {
  const r = a.record!;
  const alert = { ...r.alert, enrichment: r.enrichment ?? { status: 'unavailable' as const, kind: 'unknown' as const, reason: '' } };
  const shown = alertLinks(alert, r.externalURL, grafanaBase);
  if (!shown.length) return '';
  const label = (l: string) => (l === 'Silence' ? 'Silence in Alertmanager' : l);
  return `<p class="links">${shown.map((l) => `<a href="${escapeHtml(l.url)}" rel="noopener noreferrer">${escapeHtml(label(l.label))}</a>`).join(' · ')}</p>`;
}
