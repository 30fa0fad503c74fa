/**
 * Alert storms: when a group brings more alerts than one readable message holds, each channel
 * sends a digest instead — counts by severity, alert name and model, the top alerts by severity and
 * then by their kind's main value (shown beside each), the likely cause most of them share, and what
 * was left out, with Alertmanager's `truncatedAlerts` added to the total. The values come from the
 * same O(kinds) queries that enrich one alert, so a storm costs Prometheus no more than a single alert.
 */
import type { EnrichedAlert, Enrichment, LikelyCause, Signal } from '../enrich/types.js';
import { mainSignal } from '../enrich/main-signal.js';
import { formatLabel, formatReading, formatTime, likelyCauseIn, silenceUrl } from './format.js';
import type { Notification } from './notification.js';
import { ACK_ICON, alertTitle, FLAPPING_ICON, headline, httpLink, type Markup, statusIcon } from './content.js';
import { count, messages, type Locale } from './locale.js';
import { truncateChars } from '../core/truncate.js';
import { lazy } from '../core/lazy.js';
import { isolateBidi } from './bidi.js';
import { severityRank } from '../alertmanager/severity.js';

/** Default: a group with more alerts than this (incl. those Alertmanager left out) becomes a digest. */
export const DIGEST_ABOVE_ALERTS = 10;
/** Highest allowed `digestAbove` of a channel instance; the pipeline enriches in detail only up to it. */
export const MAX_DETAILED_ALERTS = 50;
/** Alerts listed by name in a digest. */
export const DIGEST_TOP_ALERTS = 10;
/** Entries of one count list (by severity, alert name, model) before `+N more`. */
export const DIGEST_MAX_ENTRIES = 8;
/** Longest line of one top alert, characters. */
const TOP_LINE_CHARS = 240;

/**
 * Text order that reads numbers as numbers (`10.0.0.2` before `10.0.0.10`, `model-9` before `model-10`):
 * ties of a digest's lists are read by people scanning for an instance or model.
 */
// Built on first use, not at import (ICU data; Lambda cold init, see shared/core/lazy.ts).
const collator = lazy(() => new Intl.Collator('en', { numeric: true }));
const natural = (a: string, b: string) => collator().compare(a, b);
const rank = (a: EnrichedAlert) => (a.status === 'firing' ? 10 : 0) + severityRank(a.labels.severity);

/** How a channel renders: its language and when it switches to a digest. */
export interface RenderOptions {
  /** Default: the channel's (`en`; Feishu `zh-CN`). */
  locale?: Locale;
  /** Digest when alerts + `truncatedAlerts` exceed this; default {@link DIGEST_ABOVE_ALERTS}. */
  digestAbove?: number;
}

/** Whether `notification` is a storm for a channel that digests above `digestAbove` alerts. */
export function isStorm(notification: Notification, digestAbove = DIGEST_ABOVE_ALERTS): boolean {
  return notification.alerts.length + notification.truncatedAlerts > digestAbove;
}

/** A label value and how many alerts carry it. */
export interface LabelCount {
  value: string;
  alerts: number;
}

/** The numbers of a digest. */
export interface Digest {
  /** Alerts in the notification. */
  received: number;
  firing: number;
  resolved: number;
  /** `truncatedAlerts`: alerts Alertmanager did not include. */
  notIncluded: number;
  bySeverity: LabelCount[];
  byAlertname: LabelCount[];
  byModel: LabelCount[];
  /**
   * The most severe alerts, firing first; among equals, those with a main value (grouped by signal,
   * the most common first) by that value, highest first; then by `instance` with numbers read as numbers
   * (`10.0.0.2` before `10.0.0.10`; Alertmanager sorts it as text); then in Alertmanager's order.
   */
  top: EnrichedAlert[];
  /** The likely cause found for the most alerts, with how many (at least one); absent when none has one. */
  /** `found`: the enrichment of the first alert with it (the facts its evidence reads, for another language). */
  sharedCause?: { cause: LikelyCause; alerts: number; found: Extract<Enrichment, { status: 'enriched' }> };
}

/** Counts a label over alerts, most frequent first (ties by value, numbers read as numbers); a missing label counts as `''`. */
export function countBy(alerts: EnrichedAlert[], label: string): LabelCount[] {
  const counts = new Map<string, number>();
  for (const alert of alerts) {
    const value = alert.labels[label] ?? '';
    counts.set(value, (counts.get(value) ?? 0) + 1);
  }
  return [...counts]
    .map(([value, alerts]) => ({ value, alerts }))
    .sort((a, b) => b.alerts - a.alerts || natural(a.value, b.value));
}

/** Summarises a notification for a digest. Linear in the number of alerts, bar one sort (a storm may bring thousands). */
export function summarize(notification: Notification, topAlerts = DIGEST_TOP_ALERTS): Digest {
  const { alerts } = notification;
  const firing = alerts.filter((a) => a.status === 'firing').length;
  const bySeverity = countBy(alerts, 'severity').sort(
    (a, b) => severityRank(b.value) - severityRank(a.value) || b.alerts - a.alerts,
  );
  const sharedCause = mostCommonCause(alerts);
  return {
    received: alerts.length,
    firing,
    resolved: alerts.length - firing,
    notIncluded: notification.truncatedAlerts,
    bySeverity,
    byAlertname: countBy(alerts, 'alertname'),
    byModel: countBy(alerts, 'model_name'),
    top: topAlertsOf(alerts, topAlerts),
    ...(sharedCause ? { sharedCause } : {}),
  };
}

/**
 * The `n` alerts a digest names: by rank (firing, severity); among equals, alerts with a main value
 * before those without, grouped by signal (the signal most alerts have first: values of different
 * signals do not compare), highest value first; then by `instance`, numbers read as numbers; then
 * Alertmanager's order.
 */
function topAlertsOf(alerts: EnrichedAlert[], n: number): EnrichedAlert[] {
  const keyed = alerts.map((alert, index) => ({ alert, index, rank: rank(alert), main: mainSignal(alert.enrichment) }));
  const perSignal = new Map<string, number>();
  for (const k of keyed) if (k.main) perSignal.set(k.main.name, (perSignal.get(k.main.name) ?? 0) + 1);
  const order = new Map(
    [...perSignal].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([name], i) => [name, i]),
  );
  const group = (main: Signal | undefined) => (main ? order.get(main.name)! : order.size);
  keyed.sort(
    (a, b) =>
      b.rank - a.rank ||
      group(a.main) - group(b.main) ||
      (b.main?.value ?? 0) - (a.main?.value ?? 0) ||
      natural(a.alert.labels.instance ?? '', b.alert.labels.instance ?? '') ||
      a.index - b.index,
  );
  return keyed.slice(0, n).map((k) => k.alert);
}

/** The likely cause (by rule) found for the most alerts; ties go to the cause met first. */
function mostCommonCause(alerts: EnrichedAlert[]): Digest['sharedCause'] {
  const byRule = new Map<string, NonNullable<Digest['sharedCause']>>();
  for (const { enrichment: e } of alerts) {
    if (e.status !== 'enriched' || !e.likelyCause) continue;
    const entry = byRule.get(e.likelyCause.rule);
    if (entry) entry.alerts += 1;
    else byRule.set(e.likelyCause.rule, { cause: e.likelyCause, alerts: 1, found: e });
  }
  let best: Digest['sharedCause'];
  for (const entry of byRule.values()) if (!best || entry.alerts > best.alerts) best = entry;
  return best;
}

/** A digest as lines of one platform's markup; each renderer lays these out in its own blocks. */
export interface DigestText {
  /** How many alerts, firing/resolved, and those Alertmanager left out. */
  summary: string[];
  /** One line per count list: `By severity: critical 1,200 · warning 3,800`. */
  counts: string[];
  /** Heading of {@link top}. */
  topTitle: string;
  /** One line per top alert: icon, severity, title, model and instance, and its main value. */
  top: string[];
  /**
   * The likely cause most alerts share, as lines (`Likely cause of 812 of 1,000 alerts: …`, `Try: …`);
   * empty when no alert has one.
   */
  cause: string[];
  /** What the message leaves out: `+4,990 more alerts · +1,497 not included by Alertmanager`. */
  more: string;
  /** Alertmanager's new-silence form for the whole group (its `groupLabels`), when known. */
  silenceUrl?: string;
}

/** Words a digest in `locale` with the platform's markup `m`. */
export function digestText(
  notification: Notification,
  m: Markup,
  locale?: Locale,
  topAlerts = DIGEST_TOP_ALERTS,
): DigestText {
  const t = messages(locale);
  const d = summarize(notification, topAlerts);
  const top = d.top.map((alert) => topLine(alert, m, Boolean(notification.flapping?.[alert.fingerprint]), locale));
  const group = Object.keys(notification.groupLabels).length ? notification.groupLabels : notification.commonLabels;
  return {
    summary: summaryLines(notification, d, m, locale),
    counts: countLines(d, m, locale),
    topTitle: m.bold(
      d.top.some((a) => mainSignal(a.enrichment)) ? t.digest.topByValue(d.top.length) : t.digest.top(d.top.length),
    ),
    top,
    cause: sharedCauseLines(d, m, locale),
    more: digestMoreText(notification, d.top.length, locale),
    silenceUrl:
      notification.externalURL && Object.keys(group).length
        ? httpLink(silenceUrl(notification.externalURL, group))
        : undefined,
  };
}

/** How many alerts came, firing and resolved, not included by Alertmanager, and who acknowledged them. */
function summaryLines(notification: Notification, d: Digest, m: Markup, locale: Locale | undefined): string[] {
  const t = messages(locale);
  const states = [d.firing ? t.digest.firing(d.firing) : '', d.resolved ? t.digest.resolved(d.resolved) : ''];
  const summary = [m.bold(t.digest.received(d.received)), states.filter(Boolean).join(' · ')];
  if (d.notIncluded > 0) summary.push(t.notIncluded(d.notIncluded));
  const acked = acknowledgedLine(notification.alerts, m, locale);
  if (acked) summary.push(acked);
  return summary;
}

/** The counts by severity, by alert name and by model, each at most {@link DIGEST_MAX_ENTRIES} entries. */
function countLines(d: Digest, m: Markup, locale: Locale | undefined): string[] {
  const t = messages(locale);
  const list = (title: string, entries: LabelCount[]) => {
    const shown = entries
      .slice(0, DIGEST_MAX_ENTRIES)
      .map((e) => `${m.escape(isolateBidi(e.value) || t.digest.noLabel)} ${m.bold(count(e.alerts))}`);
    if (entries.length > DIGEST_MAX_ENTRIES) shown.push(t.digest.moreEntries(entries.length - DIGEST_MAX_ENTRIES));
    return `${title}: ${shown.join(' · ')}`;
  };
  return [
    list(t.digest.bySeverity, d.bySeverity),
    list(t.digest.byAlertname, d.byAlertname),
    list(t.digest.byModel, d.byModel),
  ];
}

/** The likely cause most alerts share, and what to try; none when they share none. */
function sharedCauseLines(d: Digest, m: Markup, locale: Locale | undefined): string[] {
  const t = messages(locale);
  const shared = d.sharedCause && likelyCauseIn(d.sharedCause.found, locale);
  if (!d.sharedCause || !shared) return [];
  return [
    `${m.bold(t.digest.sharedCause(d.sharedCause.alerts, d.received))}${t.likelyCause.colon}${m.escape(shared.cause)}`,
    m.escape(`${t.likelyCause.try}${t.likelyCause.colon}${shared.action}`),
  ];
}

/**
 * Who acknowledged the alerts, as a resolved detailed message says per alert: one person with the time
 * of their first acknowledgement, several with how many each (most first, at most {@link DIGEST_MAX_ENTRIES}
 * named); `undefined` when nobody did.
 * e.g. `👀 Acknowledged by *alice* at 2026-12-01 03:01:00 UTC (12 of 12 alerts)`.
 */
function acknowledgedLine(alerts: EnrichedAlert[], m: Markup, locale?: Locale): string | undefined {
  const t = messages(locale);
  const people = new Map<string, { alerts: number; first: string }>();
  for (const { acknowledgement: ack } of alerts) {
    if (!ack) continue;
    const p = people.get(ack.by);
    if (!p) people.set(ack.by, { alerts: 1, first: ack.at });
    else {
      p.alerts += 1;
      if (ack.at < p.first) p.first = ack.at;
    }
  }
  if (people.size === 0) return undefined;
  const sorted = [...people].sort((a, b) => b[1].alerts - a[1].alerts || natural(a[0], b[0]));
  const names =
    sorted.length === 1
      ? t.digest.ackedAt(m.bold(m.escape(sorted[0]![0])), formatTime(sorted[0]![1].first))
      : [
          ...sorted.slice(0, DIGEST_MAX_ENTRIES).map(([by, p]) => `${m.bold(m.escape(by))} ${count(p.alerts)}`),
          ...(sorted.length > DIGEST_MAX_ENTRIES ? [t.digest.moreEntries(sorted.length - DIGEST_MAX_ENTRIES)] : []),
        ].join(' · ');
  const n = sorted.reduce((sum, [, p]) => sum + p.alerts, 0);
  return `${ACK_ICON} ${t.digest.acknowledged(names, n, alerts.length)}`;
}

/** `+N more alerts · +M not included by Alertmanager` for a digest that lists `shown` alerts by name. */
export function digestMoreText(notification: Notification, shown: number, locale?: Locale): string {
  const t = messages(locale);
  const rest = notification.alerts.length - shown;
  const parts = [
    rest > 0 ? t.moreAlerts(rest) : '',
    notification.truncatedAlerts > 0 ? t.notIncluded(notification.truncatedAlerts) : '',
  ];
  return parts.filter(Boolean).join(' · ');
}

function topLine(alert: EnrichedAlert, m: Markup, flapping: boolean, locale?: Locale): string {
  const icon = flapping && alert.status === 'firing' ? FLAPPING_ICON : statusIcon(alert.status);
  const where = [alert.labels.model_name, alert.labels.instance]
    .map((v) => isolateBidi(v ?? ''))
    .filter(Boolean)
    .join(' @ ');
  const main = mainSignal(alert.enrichment);
  const value = main ? `${formatLabel(main, locale)} ${formatReading(main.value, main, locale)}` : '';
  // Alert text among our words: isolated, so an override in one reorders nothing after it.
  const text = [isolateBidi(alert.labels.severity ?? ''), isolateBidi(alertTitle(alert)), where, value]
    .filter(Boolean)
    .join(' · ');
  const cut = truncateChars(text, TOP_LINE_CHARS);
  return `${icon} ${m.escape(cut)}`;
}

/**
 * The digest's header, counting the alerts Alertmanager left out: `🔥 FIRING · critical · Alert
 * storm · VLLMQueueBacklog (6,497)`; the alert name only when the whole group shares one.
 */
export function digestTitle(notification: Notification, locale?: Locale): string {
  const t = messages(locale);
  const h = headline(notification);
  const total = notification.alerts.length + notification.truncatedAlerts;
  const parts = [
    `${statusIcon(h.status)} ${t[h.status]}`,
    isolateBidi(h.severity),
    t.digest.title,
    isolateBidi(notification.commonLabels.alertname ?? ''),
  ];
  return `${parts.filter(Boolean).join(' · ')} (${count(total)})`;
}
