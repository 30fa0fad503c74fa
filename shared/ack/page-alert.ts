/**
 * One alert on the acknowledgement page, as the place to decide: what it is and its state, the
 * evidence (each signal when it fired, when the message went out, and now), the likely cause and what
 * to try, the chart, and the links onward (the rule's graph, Grafana, the runbook, the silence form).
 *
 * Where the evidence comes from: the values when fired and at notification, and the cause the message
 * gave, are the enrichment the alert record kept from the moment of sending (its existing write, no
 * extra request); "now" is a fresh Prometheus query made when the page is opened. Prometheus down at
 * that moment only leaves "now" out, with the reason. Every value is escaped (`escape.ts`); links pass `httpLink`.
 * Every text from the alert or a person is bidi-isolated (`isolateHtml`): one label value with a
 * right-to-left override must not reverse the labels after it.
 */
import { hasKnownStart } from '../alertmanager/schema.js';
import type { Locale } from '../core/locale.js';
import type { Enrichment, Signal } from '../enrich/types.js';
import { formatMemoryTrend, ZH_TREND_WORDS } from '../enrich/values.js';
import { alertLinks, alertText, alertTitle, MAX_VALUES_CHARS } from '../render/content.js';
import { grafanaValuesText, sentByGrafana } from '../alertmanager/grafana.js';
import { elapsed } from '../render/elapsed.js';
import {
  formatLabel,
  formatLikelyCause,
  formatReading,
  formatTime,
  likelyCauseIn,
  unavailableReason,
} from '../render/format.js';
import { linkLabel } from '../render/locale.js';
import type { AlertRecord } from '../store/alert-record.js';
import { truncateChars } from '../core/truncate.js';
import { h, type Html, isolateHtml, isolateText, joinHtml } from './escape.js';
import { pageWords, type PageWords } from './page-words.js';

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
 * @param locale the page's language (default `en`)
 */
export function alertSection(a: PageAlert, nowMs: number, grafanaBase?: string, locale?: Locale): Html {
  const w = pageWords(locale);
  const r = a.record;
  if (!r)
    return h`<section><h2>${w.alertHeading(isolateHtml(a.fingerprint))}</h2><p class="muted">${w.unknownAlert}</p></section>`;
  const labels = joinHtml(
    Object.entries(r.alert.labels)
      .filter(([k]) => k !== 'alertname')
      .map(([k, v]) => h`${isolateHtml(k)}=${isolateHtml(v)}`),
    ' · ',
  );
  const text = alertText(r.alert);
  const description = text && h`<p class="muted">${isolateHtml(truncateChars(text, MAX_DESCRIPTION_CHARS))}</p>`;
  const severity = r.alert.labels.severity && h` · ${isolateHtml(r.alert.labels.severity)}`;
  const ctx: Ctx = { w, locale };
  return h`<section><h2>${isolateHtml(r.alert.labels.alertname ?? '')}${severity}</h2><p>${isolateHtml(alertTitle(r.alert))}</p><p class="muted">${labels}</p>${grafanaValues(r, w)}<p>${stateLine(r, nowMs, ctx)}</p>${ackLine(r, ctx)}${evidence(r, a.fresh, ctx)}${causes(r.enrichment, a.fresh, ctx)}${chart(a, w)}${description}${links(a, grafanaBase, ctx)}</section>`;
}

/** The page's words and language, for the parts of a section. */
interface Ctx {
  w: PageWords;
  locale?: Locale;
}

function stateLine(r: AlertRecord, nowMs: number, { w, locale }: Ctx): Html {
  // An unknown start (AMP's default text sends none) is left out rather than shown as year 1.
  const known = hasKnownStart(r);
  if (r.status === 'firing')
    return h`<span class="firing">${w.firing}</span>${known && w.since(formatTime(r.startsAt), elapsed(Date.parse(r.startsAt), nowMs, locale))}`;
  return h`<span class="resolved">${w.resolved}</span>${r.resolvedAt && w.resolvedAt(formatTime(r.resolvedAt))}${known && w.fired(formatTime(r.startsAt))}`;
}

function ackLine(r: AlertRecord, { w, locale }: Ctx): Html | undefined {
  const ack = r.acknowledgement;
  if (!ack) return r.status === 'firing' ? h`<p class="muted">${w.notAcknowledged}</p>` : undefined;
  const after = hasKnownStart(r) ? elapsed(Date.parse(r.startsAt), Date.parse(ack.at), locale) : undefined;
  const silence = ack.silenceId ? h`<code>${isolateHtml(ack.silenceId)}</code>` : undefined;
  const line = w.acknowledgedBy({
    by: isolateHtml(ack.by),
    at: formatTime(ack.at),
    after,
    channel: ack.channel,
    silence,
  });
  return h`<p class="acked">${line}</p>`;
}

/**
 * The signals, one line each: `TTFT p95: when fired 0.21 s · at notification 2.3 s · now 3.1 s`. Signals
 * the record kept come first, in its order; a signal only the fresh query has is added after them.
 */
function evidence(r: AlertRecord, fresh: Enrichment | undefined, ctx: Ctx): Html | undefined {
  const { w, locale } = ctx;
  const kept = r.enrichment?.status === 'enriched' ? r.enrichment.signals : [];
  const now = fresh?.status === 'enriched' ? new Map(fresh.signals.map((s) => [s.name, s])) : undefined;
  const names = new Set(kept.map((s) => s.name));
  const lines = [
    ...kept.map((s) => signalLine(s, now?.get(s.name), r.notifiedAt, ctx)),
    ...[...(now?.values() ?? [])]
      .filter((s) => !names.has(s.name))
      .map((s) => signalLine(undefined, s, r.notifiedAt, ctx)),
  ];
  const notes: string[] = [];
  if (fresh?.status === 'unavailable') notes.push(w.valuesNowUnavailable(unavailableReason(fresh, locale)));
  if (!kept.length && r.enrichment?.status === 'unavailable' && !now?.size)
    notes.push(w.whenNotified(unavailableReason(r.enrichment, locale)));
  const trend =
    fresh?.status === 'enriched' && fresh.trend
      ? fresh.trend
      : r.enrichment?.status === 'enriched'
        ? r.enrichment.trend
        : undefined;
  if (trend) {
    const line = formatMemoryTrend(trend, locale === 'zh-CN' ? ZH_TREND_WORDS : undefined);
    const spark = trend.sparkline && h` <span class="spark">${trend.sparkline}</span>`;
    lines.push(h`<li><strong>${w.memoryTrend}</strong>${w.colon}${line}${spark}</li>`);
  }
  if (!lines.length && !notes.length) return undefined;
  return h`<h3>${w.evidence}</h3>${lines.length > 0 && h`<ul class="evidence">${lines}</ul>`}${notes.map((n) => h`<p class="muted">${n}</p>`)}`;
}

/** One signal: when fired and at notification from the record's copy, now from the fresh one. */
function signalLine(kept: Signal | undefined, now: Signal | undefined, notifiedAt: string, { w, locale }: Ctx): Html {
  const s = (kept ?? now)!;
  const atStart = kept?.atStart !== undefined ? kept.atStart : now?.atStart;
  const parts: Html[] = [];
  if (atStart !== undefined) parts.push(h`${w.whenFired} ${formatReading(atStart, s, locale)}`);
  if (kept)
    parts.push(
      h`<span title="${formatTime(notifiedAt)}">${w.atNotification}</span> ${formatReading(kept.value, kept, locale)}`,
    );
  if (now) parts.push(h`${w.now} <strong>${formatReading(now.value, now, locale)}</strong>`);
  return h`<li><strong>${formatLabel(s, locale)}</strong>${w.colon}${joinHtml(parts, ' · ')}</li>`;
}

/** The cause the message gave; and, when the evidence now points elsewhere, that one too. */
function causes(kept: Enrichment | undefined, fresh: Enrichment | undefined, ctx: Ctx): Html[] {
  const then = kept?.status === 'enriched' && kept.likelyCause ? kept : undefined;
  const now = fresh?.status === 'enriched' && fresh.likelyCause ? fresh : undefined;
  const blocks: Html[] = [];
  if (then) blocks.push(causeBlock(then, ctx.w.causeWhenNotified, ctx));
  if (now && now.likelyCause?.rule !== then?.likelyCause?.rule)
    blocks.push(causeBlock(now, then ? ctx.w.causeNowToo : ctx.w.causeNow, ctx));
  return blocks;
}

function causeBlock(e: Extract<Enrichment, { status: 'enriched' }>, heading: string, { locale }: Ctx): Html {
  const withCause = { ...e, likelyCause: e.likelyCause! };
  const cause = likelyCauseIn(withCause, locale)!;
  const [, evidenceLine, tryLine] = formatLikelyCause(withCause, locale);
  return h`<div class="cause"><h3>${heading}</h3><p><strong>${cause.cause}</strong></p><p class="muted">${evidenceLine ?? ''}</p><p>${tryLine ?? ''}</p></div>`;
}

function chart(a: PageAlert, w: PageWords): Html | undefined {
  if (!a.chartUrl || !a.record) return undefined;
  const name = a.record.alert.labels.alertname ?? 'alert';
  return h`<figure><img src="${a.chartUrl}" alt="${w.chartAlt(isolateText(name))}" loading="lazy"></figure>`;
}

/** Grafana's values of the alert when Grafana sent it (its rule's results when it notified). */
function grafanaValues(r: AlertRecord, w: PageWords): Html | undefined {
  const text = grafanaValuesText(r.alert);
  return text ? h`<p>${w.grafanaValues}${w.colon}${isolateHtml(truncateChars(text, MAX_VALUES_CHARS))}</p>` : undefined;
}

/** Graph, Grafana, Runbook and Silence as messages show them (`alertLinks`: http(s) only). */
function links(a: PageAlert, grafanaBase: string | undefined, { w, locale }: Ctx): Html | undefined {
  const r = a.record!;
  const alert = {
    ...r.alert,
    enrichment: r.enrichment ?? { status: 'unavailable' as const, kind: 'unknown' as const, reason: '' },
  };
  const shown = alertLinks(alert, r.externalURL, grafanaBase);
  if (!shown.length) return undefined;
  const where = sentByGrafana(r.alert) ? 'Grafana' : 'Alertmanager';
  const label = (l: string) => (l === 'Silence' ? w.silenceIn(where) : linkLabel(l, locale));
  const anchors = shown.map((l) => h`<a href="${l.url}" rel="noopener noreferrer">${label(l.label)}</a>`);
  return h`<p class="links">${joinHtml(anchors, ' · ')}</p>`;
}
