/**
 * What a notification says, independent of any platform's markup: the headline and, per alert,
 * the lines and links every channel shows. Slack, Feishu, SNS and the console render this same
 * content with their own markup, so the channels cannot drift apart.
 */
import { isolateBidi } from './bidi.js';
import { severityRank } from '../alertmanager/severity.js';
import { grafanaValuesText, sentByGrafana } from '../alertmanager/grafana.js';
import { hasEnded, hasKnownStart } from '../alertmanager/schema.js';
import type { EnrichedAlert, Enrichment, Signal } from '../enrich/types.js';
import {
  formatLabel,
  formatLikelyCause,
  formatReading,
  formatTime,
  formatTrend,
  formatTrendBasis,
  silenceUrl,
  unavailableReason,
} from './format.js';
import type { Flapping, Notification, NotificationKind } from './notification.js';
import { elapsed } from './elapsed.js';
import { messages, type LinkLabel, type Locale } from './locale.js';
import { truncateChars } from '../core/truncate.js';
import { grafanaUrl } from './grafana.js';

/** Labels worth showing, in this order, when an alert has them. Others stay in the silence link. */
export const KEY_LABELS = [
  'model_name',
  'instance',
  'gpu',
  'Hostname',
  'hostname',
  'engine',
  'namespace',
  'pod',
] as const;

/** The group at a glance: what the header, the SNS subject and the message attributes say. */
export interface Headline {
  status: Notification['status'];
  /**
   * `commonLabels.severity`, else the most severe `severity` among the alerts by the one severity mapping
   * (`alertmanager/severity.ts`), as the rule wrote it; `''` when none.
   */
  severity: string;
  /** `commonLabels.alertname`, else the distinct alert names joined by `, `. */
  alertname: string;
  /** The names {@link alertname} joins, for display (each bidi-isolated on its own). */
  alertnames: string[];
  /** Alerts in the notification with the notification's status. */
  count: number;
  /** Firing alerts marked flapping ({@link Notification.flapping}). */
  flapping?: number;
  /** Firing alerts firing again after an announced resolve ({@link Notification.generations}). */
  firingAgain?: number;
  /** {@link Notification.kind}; absent means `alert`. */
  kind?: NotificationKind;
}

/** A link under an alert. */
export interface Link {
  label: LinkLabel;
  url: string;
}

/** Markup of one platform; `escape` is applied to every piece of alert text, never to markup. */
export interface Markup {
  bold(text: string): string;
  italic(text: string): string;
  escape(text: string): string;
}

/** No markup at all: plain text (SNS, console). */
export const PLAIN: Markup = { bold: (s) => s, italic: (s) => s, escape: (s) => s };

/** Summarises the group for titles. */
export function headline(notification: Notification): Headline {
  const { alerts, commonLabels, status } = notification;
  const names =
    commonLabels.alertname !== undefined
      ? [commonLabels.alertname]
      : [...new Set(alerts.map((a) => a.labels.alertname ?? '').filter(Boolean))];
  return {
    status,
    severity: commonLabels.severity ?? highestSeverity(alerts),
    alertname: names.join(', '),
    alertnames: names,
    count: alerts.filter((a) => a.status === status).length,
    flapping: alerts.filter((a) => a.status === 'firing' && notification.flapping?.[a.fingerprint]).length,
    firingAgain: alerts.filter((a) => isFiringAgain(a, notification)).length,
    ...(notification.kind && notification.kind !== 'alert' && { kind: notification.kind, count: alerts.length }),
  };
}

function highestSeverity(alerts: EnrichedAlert[]): string {
  let best = '';
  for (const alert of alerts) {
    const severity = alert.labels.severity ?? '';
    if (!best || severityRank(severity) > severityRank(best)) best = severity;
  }
  return best;
}

/** Whether a firing alert fires again after its resolve was announced (same `startsAt`, generation ≥ 1). */
export function isFiringAgain(alert: EnrichedAlert, notification: Pick<Notification, 'generations'>): boolean {
  return alert.status === 'firing' && (notification.generations?.[alert.fingerprint] ?? 0) > 0;
}

/** Status icon: 🔥 firing, ✅ resolved. */
export function statusIcon(status: Notification['status']): string {
  return status === 'firing' ? '🔥' : '✅';
}

/** Flapping icon. */
export const FLAPPING_ICON = '🔁';

/**
 * The header line, e.g. `🔥 FIRING · critical · VLLMKVCacheNearlyFull (2)`; empty parts are left out.
 * When every firing alert is flapping it reads `🔁 FLAPPING · …`; when every one fires again after
 * an announced resolve, `🔥 FIRING AGAIN · …`. Words in `locale` (default `en`).
 */
export function headlineText(h: Headline, locale: Locale = 'en'): string {
  const t = messages(locale);
  const flapping = h.status === 'firing' && h.count > 0 && h.flapping === h.count;
  const kind = h.kind && h.kind !== 'alert' ? KIND_WORDS[locale][h.kind] : undefined;
  const again = h.status === 'firing' && h.count > 0 && h.firingAgain === h.count;
  const status =
    kind ??
    (flapping ? `${FLAPPING_ICON} ${t.flapping}` : `${statusIcon(h.status)} ${again ? t.firingAgain : t[h.status]}`);
  // Label values among our words: isolated, so an override in one reorders nothing after it.
  const parts = [
    status,
    isolateBidi(h.severity),
    `${h.alertnames.map(isolateBidi).join(', ') || t.alerts} (${h.count})`,
  ];
  return parts.filter(Boolean).join(' · ');
}

/*
 * Which annotation says what, in every channel and on the page (docs/messages.md):
 * - the title: `summary`, else the first line of `message` (the older kubernetes-mixin, node_exporter's
 *   mixin and many forks carry their whole text there), else the alert name;
 * - the text under the alert: `description`, then `message`, each once (a `message` that repeats the
 *   description or the title, or that is the title, is not shown again).
 */

const firstLine = (text: string | undefined) => (text ?? '').trim().split(/\r?\n/, 1)[0]!.trim();

/**
 * What the alert says in one line, from its annotations: `summary`, else the first line of `message`;
 * `''` when neither says anything.
 */
export function alertSaid(alert: Pick<EnrichedAlert, 'annotations'>): string {
  return alert.annotations.summary?.trim() || firstLine(alert.annotations.message);
}

/** The alert's title: {@link alertSaid}, else its `alertname`. */
export function alertTitle(alert: Pick<EnrichedAlert, 'annotations' | 'labels'>): string {
  return alertSaid(alert) || alert.labels.alertname || 'alert';
}

/**
 * The free text under the alert's title: `description`, then `message`, joined with a newline; a
 * `message` is left out when it is the title (one line, no `summary`) or repeats the description or the
 * summary. `''` when there is none.
 */
export function alertText(alert: Pick<EnrichedAlert, 'annotations'>): string {
  const { summary, description, message } = alert.annotations;
  const said = (s: string | undefined) => s?.trim() ?? '';
  const shown = [said(description)];
  const m = said(message);
  const isTitle = !said(summary) && m === firstLine(m);
  if (m && !isTitle && m !== shown[0] && m !== said(summary)) shown.push(m);
  return shown.filter(Boolean).join('\n');
}

/** How {@link alertLines} words an alert beyond its own data. */
export interface AlertLineOptions {
  /** Default `en`. */
  locale?: Locale;
  /** Set when the alert is flapping: the title gets 🔁 and a line says how often it fired. */
  flapping?: Flapping;
  /** Set when the alert fires again after its resolve was announced: a line says so. */
  firingAgain?: boolean;
  /** Longest text of the alert (lines joined with `\n`, markup included), characters; default {@link MAX_ALERT_TEXT_CHARS}. */
  maxChars?: number;
}

/**
 * One alert's text in every channel, characters: Slack's section limit, used by Feishu, SNS and the
 * console too so that all show the same. @see https://api.slack.com/reference/block-kit/blocks#section
 */
export const MAX_ALERT_TEXT_CHARS = 3000;
/** Longest title (`summary`) shown, characters: a headline, not a report; the description holds the rest. */
export const MAX_TITLE_CHARS = 256;
/** Longest key label value shown, characters (instance, pod and model names are far shorter). */
export const MAX_KEY_LABEL_CHARS = 256;
/** Longest line of Grafana's values shown, characters (a rule over many series writes a long `valueString`). */
export const MAX_VALUES_CHARS = 512;

/**
 * The lines describing one alert, in the platform's markup, at most `options.maxChars` in all (joined
 * with `\n`): title with status icon, key labels, fresh values (`when fired → now` where the value at
 * the start is known), memory trend and its sparkline, the likely cause with its evidence (or why
 * enrichment is unavailable), start and end times, who acknowledged it, and last the description and
 * message ({@link alertText}).
 *
 * The description is free text of any length (a dump of offending requests), so it comes last and is
 * what gets shortened, ending in `…`: a platform's limit must never cut the lines that tell two alerts
 * apart (`instance`, `model_name`), the evidence or the acknowledgement. The title and key label values
 * are capped ({@link MAX_TITLE_CHARS}, {@link MAX_KEY_LABEL_CHARS}) so they cannot crowd those out either.
 */
export function alertLines(alert: EnrichedAlert, m: Markup, options: AlertLineOptions = {}): string[] {
  const lines = identifyingLines(alert, m, options);
  const description = alertText(alert);
  if (!description) return lines;
  // The room left after the other lines and the newline before the description.
  const room = (options.maxChars ?? MAX_ALERT_TEXT_CHARS) - lines.join('\n').length - 1;
  const shown = truncateEscaped(m.escape(description), room);
  return shown ? [...lines, shown] : lines;
}

/** Everything {@link alertLines} shows but the description, none of it cut by a platform limit. */
function identifyingLines(alert: EnrichedAlert, m: Markup, options: AlertLineOptions): string[] {
  const lines = [...headLines(alert, m, options), ...labelLines(alert, m, options.locale)];
  const e = alert.enrichment;
  if (e.status === 'unavailable')
    lines.push(
      m.italic(m.escape(messages(options.locale).enrichmentUnavailable(unavailableReason(e, options.locale)))),
    );
  else lines.push(...enrichedLines(e, m, options.locale));
  const times = timesLine(alert, options.locale);
  if (times) lines.push(times);
  const acked = acknowledgementLine(alert, m, options.locale);
  if (acked) lines.push(acked);
  return lines;
}

/** The title, and right under it (so they show even when the platform's limit cuts the rest) the marks: flapping, cut, firing again. */
function headLines(alert: EnrichedAlert, m: Markup, options: AlertLineOptions): string[] {
  const t = messages(options.locale);
  const flapping = options.flapping && alert.status === 'firing' ? options.flapping : undefined;
  const icon = flapping ? FLAPPING_ICON : statusIcon(alert.status);
  const lines = [`${icon} ${m.bold(m.escape(isolateBidi(truncateChars(alertTitle(alert), MAX_TITLE_CHARS))))}`];
  if (flapping)
    lines.push(m.italic(t.flappingLine(flapping.count, formatTime(new Date(flapping.sinceMs).toISOString()))));
  if (alert.cut?.length)
    lines.push(m.italic(m.escape(t.cutLine(alert.cut.map((f) => f.replace(/^(labels|annotations)\./, ''))))));
  if (options.firingAgain && alert.status === 'firing') lines.push(m.italic(t.firingAgainLine));
  return lines;
}

/** The key labels on one line, and Grafana's values of the alert on another (each when there are any). */
function labelLines(alert: EnrichedAlert, m: Markup, locale: Locale | undefined): string[] {
  const lines: string[] = [];
  const labels = KEY_LABELS.filter((name) => alert.labels[name]).map(
    (name) => `${name}: ${m.escape(isolateBidi(truncateChars(alert.labels[name] ?? '', MAX_KEY_LABEL_CHARS)))}`,
  );
  if (labels.length) lines.push(labels.join(' · '));
  const values = grafanaValuesText(alert);
  if (values)
    lines.push(`${messages(locale).grafanaValues}: ${m.escape(isolateBidi(truncateChars(values, MAX_VALUES_CHARS)))}`);
  return lines;
}

/** What the enrichment found: the signals (when fired → now), the memory trend, the likely cause. */
function enrichedLines(
  e: Extract<Enrichment, { status: 'enriched' }>,
  m: Markup,
  locale: Locale | undefined,
): string[] {
  const t = messages(locale);
  const lines = signalLines(e.signals, m, locale);
  if (e.trend) {
    const basis = e.trend.method ? ` (${m.escape(formatTrendBasis(e.trend, locale))})` : '';
    lines.push(`${t.memoryTrend}: ${formatTrend(e.trend, locale)}${basis}`);
    if (e.trend.sparkline) lines.push(`${t.memoryOverWindow}: ${e.trend.sparkline}`);
  }
  if (e.likelyCause)
    lines.push(...formatLikelyCause({ ...e, likelyCause: e.likelyCause }, locale).map((line) => m.escape(line)));
  return lines;
}

/** What is known first; the signals with no series now or when fired, one line for all of them per engine. */
function signalLines(signals: readonly Signal[], m: Markup, locale: Locale | undefined): string[] {
  const t = messages(locale);
  const lines: string[] = [];
  const absent = signals.filter(notExposed);
  const known = absent.length ? signals.filter((s) => !notExposed(s)) : signals;
  const values = known.map((s) => {
    const then = s.atStart === undefined ? '' : `${m.escape(formatReading(s.atStart, s, locale))} → `;
    return `${m.escape(formatLabel(s, locale))}: ${then}${m.bold(m.escape(formatReading(s.value, s, locale)))}`;
  });
  const legend = known.some((s) => s.atStart !== undefined) ? `${t.whenFiredNow}: ` : '';
  if (values.length) lines.push(legend + values.join(' · '));
  // An engine without the metric says so by name; a series missing for this server, by the server.
  for (const engine of new Set(absent.map((s) => s.notExposedBy))) {
    const of = absent.filter((s) => s.notExposedBy === engine);
    const labels = of.map((s) => formatLabel(s, locale)).join(locale === 'zh-CN' ? '、' : ', ');
    lines.push(m.italic(m.escape(t.notExposed(of.length, labels, engine))));
  }
  return lines;
}

/**
 * A signal with no series now nor when the alert fired (`null` both, or not read then): the server
 * does not expose it (an engine version without that metric, no DCGM matched). A `no data` then
 * beside data now, or now beside data then, says something and stays on its own.
 */
const notExposed = (s: Signal): boolean => s.value === null && (s.atStart === null || s.atStart === undefined);

function timesLine(alert: EnrichedAlert, locale?: Locale): string {
  const t = messages(locale);
  // An unknown start (AMP's default text) is left out rather than shown as year 1.
  const started = hasKnownStart(alert) ? `${t.started} ${formatTime(alert.startsAt)}` : undefined;
  const ended = alert.status === 'resolved' && hasEnded(alert) ? `${t.ended} ${formatTime(alert.endsAt)}` : undefined;
  return [started, ended].filter(Boolean).join(' · ');
}

/** Longest link shown, characters: Slack's button `url` limit, and past what most clients open. */
export const MAX_LINK_CHARS = 3000;

/**
 * The image of an alert: our chart (`chartUrl`, a signed PNG of this service), else the panel screenshot
 * Grafana sent (`imageURL`) when it is a plain http(s) link; `undefined` when there is none.
 */
export function alertImage(alert: EnrichedAlert): string | undefined {
  if (alert.chartUrl) return alert.chartUrl;
  const image = alert.imageURL && !alert.cut?.includes('imageURL') ? httpLink(alert.imageURL) : undefined;
  return image && image.length <= MAX_LINK_CHARS ? image : undefined;
}

/**
 * The alert's links, the one list every channel shows: Prometheus graph (`generatorURL`; for an alert Grafana
 * sent, its rule's page, `Rule`), its image ({@link alertImage}), the Grafana dashboard on the alert's model
 * and instance around its start (with `GRAFANA_URL`, {@link grafanaUrl}), the dashboard panel Grafana's rule
 * links (`panelURL`, else `dashboardURL`), `runbook_url` annotation, the silence form (firing alerts only:
 * nothing is left to silence once resolved) — Alertmanager's, or for an alert Grafana sent Grafana's own
 * (`silenceURL`: the alert is in Grafana's Alertmanager). Each passes {@link httpLink}:
 * these URLs come from whoever wrote the rule or posted the alert, so one that is not http(s) is left out.
 * A cut field gives no link (a cut URL is broken; a silence of cut labels would not match the alert),
 * nor does a URL over {@link MAX_LINK_CHARS}.
 * @param externalURL Alertmanager's base URL (`Notification.externalURL`), for the silence link
 * @param grafanaBase `GRAFANA_URL` (`Notification.grafanaUrl`); unset: no Grafana link
 */
export function alertLinks(alert: EnrichedAlert, externalURL: string, grafanaBase?: string): Link[] {
  const cut = new Set(alert.cut);
  const grafana = sentByGrafana(alert);
  const kept = (field: string, url: string | undefined) => (cut.has(field) ? '' : (url ?? ''));
  const candidates: [Link['label'], string][] = [];
  candidates.push([grafana ? 'Rule' : 'Graph', kept('generatorURL', alert.generatorURL)]);
  // Our own signed chart PNG (`shared/chart`), else Grafana's screenshot; Slack shows it as an image instead.
  candidates.push(['Chart', alertImage(alert) ?? '']);
  // A cut model or instance would open the dashboard on a value no series has: left out, it shows All.
  const labels = Object.fromEntries(Object.entries(alert.labels).filter(([name]) => !cut.has(`labels.${name}`)));
  candidates.push(['Grafana', grafanaUrl(grafanaBase, { ...alert, labels }) ?? '']);
  if (grafana)
    candidates.push(['Dashboard', kept('panelURL', alert.panelURL) || kept('dashboardURL', alert.dashboardURL)]);
  candidates.push(['Runbook', kept('annotations.runbook_url', alert.annotations.runbook_url)]);
  // Grafana built its silence link from the labels as sent, so a label we cut does not spoil it.
  if (alert.status === 'firing' && grafana) candidates.push(['Silence', kept('silenceURL', alert.silenceURL)]);
  else if (externalURL && alert.status === 'firing' && ![...cut].some((f) => f.startsWith('labels.')))
    candidates.push(['Silence', silenceUrl(externalURL, alert.labels)]);
  return candidates.flatMap(([label, raw]) => {
    const url = raw ? httpLink(raw) : undefined;
    return url && url.length <= MAX_LINK_CHARS ? [{ label, url }] : [];
  });
}

/**
 * A URL taken from an alert, as a link target: its normalised form (WHATWG URL: scheme lower-cased,
 * surrounding whitespace and inner tabs/newlines gone, spaces percent-encoded) when its scheme is
 * http or https, else `undefined`. `javascript:`, `data:`, `vbscript:`, `file:` and relative URLs
 * never become links, however they are spelled (`JaVaScRiPt:`, ` javascript:`, `java\tscript:`).
 * Nor does a URL carrying credentials (`https://user:pw@host/`, any user name or password): a link
 * shows them to every reader of the channel or page, and browsers treat such URLs with suspicion.
 * @see https://url.spec.whatwg.org/#concept-basic-url-parser
 * @see https://url.spec.whatwg.org/#include-credentials
 */
export function httpLink(raw: string): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return undefined;
  }
  if (url.username || url.password) return undefined;
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : undefined;
}

/**
 * What a message leaves out, e.g. `+37 more alerts`, `+1,497 not included by Alertmanager` or both
 * joined with ` · `; `''` when nothing is left out.
 * @param count alerts of the notification this message does not show
 * @param options.truncated alerts Alertmanager left out of the payload (`truncatedAlerts`)
 */
export function moreAlertsText(count: number, options: { truncated?: number; locale?: Locale } = {}): string {
  const t = messages(options.locale);
  const parts = [
    count > 0 ? t.moreAlerts(count) : '',
    (options.truncated ?? 0) > 0 ? t.notIncluded(options.truncated ?? 0) : '',
  ];
  return parts.filter(Boolean).join(' · ');
}

/**
 * Cuts escaped markup (Slack mrkdwn) to `max` characters without splitting a character
 * or grapheme and without leaving half an entity (`&am…`) at the end.
 */
export function truncateEscaped(text: string, max: number): string {
  if (text.length <= max) return text;
  return truncateChars(text, max).replace(/&[a-z]{0,4}…$/, '…');
}

/** Acknowledgement icon. */
export const ACK_ICON = '👀';

/** Header words of follow-up kinds (see {@link Notification.kind}). */
const KIND_WORDS: Record<Locale, Record<Exclude<NotificationKind, 'alert'>, string>> = {
  en: { acknowledged: `${ACK_ICON} ACKNOWLEDGED`, escalation: '🚨 UNACKNOWLEDGED' },
  'zh-CN': { acknowledged: `${ACK_ICON} 已认领`, escalation: '🚨 无人认领' },
};

const ACK_WORDS: Record<
  Locale,
  { button: string; line(by: string, at: string, after?: string): string; silence(id: string): string }
> = {
  en: {
    button: 'Acknowledge',
    line: (by, at, after) => `Acknowledged by ${by} at ${at}${after ? ` (${after} after it fired)` : ''}`,
    silence: (id) => `silenced (${id})`,
  },
  'zh-CN': {
    button: '认领',
    line: (by, at, after) => `由 ${by} 于 ${at} 认领${after ? `（触发后 ${after}）` : ''}`,
    silence: (id) => `已静默（${id}）`,
  },
};

/**
 * The notification's signed Acknowledge link, labelled in `locale`; `undefined` when it carries none
 * (no `PUBLIC_URL`/`ACK_SECRET`, nothing firing, or a follow-up).
 */
export function acknowledgeLink(
  notification: Notification,
  locale: Locale = 'en',
): { label: string; url: string } | undefined {
  if (!notification.acknowledgeUrl || notification.kind === 'acknowledged') return undefined;
  return { label: ACK_WORDS[locale].button, url: notification.acknowledgeUrl };
}

/**
 * Who acknowledged an alert and how long after it fired, e.g.
 * `👀 Acknowledged by alice at 2026-11-29 12:46:00 UTC (3 min after it fired) · silenced (1f2e…)`;
 * `undefined` when nobody has.
 */
export function acknowledgementLine(alert: EnrichedAlert, m: Markup, locale: Locale = 'en'): string | undefined {
  const ack = alert.acknowledgement;
  if (!ack) return undefined;
  const w = ACK_WORDS[locale];
  const line = w.line(
    m.bold(m.escape(ack.by)),
    formatTime(ack.at),
    hasKnownStart(alert) ? elapsed(Date.parse(alert.startsAt), Date.parse(ack.at), locale) : undefined,
  );
  return `${ACK_ICON} ${line}${ack.silenceId ? ` · ${m.escape(w.silence(ack.silenceId))}` : ''}`;
}

/** The body of an `acknowledged` follow-up: per alert, its title and who acknowledged it. */
export function followUpLines(notification: Notification, m: Markup, locale: Locale = 'en'): string[] {
  return notification.alerts.map((alert) => {
    const acked = acknowledgementLine(alert, m, locale);
    return `${m.bold(m.escape(alertTitle(alert)))}${acked ? `\n${acked}` : ''}`;
  });
}
