/**
 * Notification → PagerDuty events (pure; the sender adds the `routing_key`).
 *
 * PagerDuty's model is one alert per problem, so each alert of the notification is one event:
 * `trigger` for a firing alert, `resolve` for a resolved one, `acknowledge` for each alert of an
 * `acknowledged` follow-up, all keyed by {@link alertDedupKey}. An escalation message is a `trigger` of each
 * firing alert under that same key: where PagerDuty got the alert by its route, PagerDuty deduplicates it into
 * the open alert (a log entry, no new page; PagerDuty escalates by its own policy); where PagerDuty is an
 * escalation target only (`ESCALATION_CHANNELS`), it is the page. (A storm's members are left to the storm's
 * own alert: `storms.ts`.)
 *
 * Storms: a notification with more than `digestAbove` alerts (default {@link PAGERDUTY_DIGEST_ABOVE},
 * counting those Alertmanager left out) is one PagerDuty alert for the group, keyed by
 * {@link groupDedupKey}: `trigger` while it brings firing alerts, with the digest's counts and top
 * alerts in its details, `resolve` when it brings only resolves. One event per alert would spend
 * PagerDuty's rate limit (about 120 events a minute per integration key) in seconds, and a delivery
 * that cannot finish inside its budget is retried by Alertmanager from the start, forever; the
 * on-call person gets one page for the storm either way (PagerDuty would group them into one incident).
 */
import type { EnrichedAlert } from '../../enrich/types.js';
import { formatTime } from '../../render/format.js';
import type { Notification } from '../../render/notification.js';
import { truncateChars, utf8Bytes } from '../../core/truncate.js';
import { acknowledgeLink, alertLinks, httpLink, PLAIN, type Link } from '../../render/content.js';
import { digestText, isStorm, MAX_DETAILED_ALERTS, summarize } from '../../render/digest.js';
import { alertDedupKey, groupDedupKey } from './dedup-key.js';
import { alertDetails, shortDetails } from './details.js';
import { affected, alertSummary, highestSeverity, pagerDutySeverity } from './payload.js';
import {
  PAGERDUTY_MAX_EVENT_BYTES,
  PAGERDUTY_MAX_SUMMARY_CHARS,
  type PagerDutyFollowUp,
  type PagerDutyLink,
  type PagerDutyTrigger,
} from './wire.js';

/** Default storm threshold: above this many alerts in one notification, the group is one PagerDuty alert. */
export const PAGERDUTY_DIGEST_ABOVE = MAX_DETAILED_ALERTS;
/** `client` of every trigger: PagerDuty shows it as the event's sender. */
export const PAGERDUTY_CLIENT = 'llm-alert-pipeline';
/** Fingerprints listed in a storm's details (the rest are counted). */
const STORM_FINGERPRINTS = 100;

/** An event as rendered: everything but the `routing_key`, which only the sender reveals. */
export type RenderedEvent = Omit<PagerDutyTrigger, 'routing_key'> | Omit<PagerDutyFollowUp, 'routing_key'>;

/**
 * The events for one notification, in the order to send them (firing before resolved, as the
 * notification lists them).
 * @param options.digestAbove storm threshold (see the file header)
 */
export function renderPagerDuty(notification: Notification, options: { digestAbove?: number } = {}): RenderedEvent[] {
  const generation = (a: EnrichedAlert) => notification.generations?.[a.fingerprint] ?? 0;
  if (notification.kind === 'escalation')
    return notification.alerts.filter((a) => a.status === 'firing').map((a) => trigger(a, notification, generation(a)));
  if (notification.kind === 'acknowledged')
    return notification.alerts.map((a) => ({
      event_action: 'acknowledge',
      dedup_key: alertDedupKey(a, generation(a)),
    }));
  if (isStorm(notification, options.digestAbove ?? PAGERDUTY_DIGEST_ABOVE)) return [stormEvent(notification)];
  return notification.alerts.map((a) =>
    a.status === 'firing'
      ? trigger(a, notification, generation(a))
      : { event_action: 'resolve', dedup_key: alertDedupKey(a, generation(a)) },
  );
}

function trigger(alert: EnrichedAlert, n: Notification, generation: number): Omit<PagerDutyTrigger, 'routing_key'> {
  const details = alertDetails(alert, { generation, flapping: n.flapping?.[alert.fingerprint] });
  const event: Omit<PagerDutyTrigger, 'routing_key'> = {
    event_action: 'trigger',
    dedup_key: alertDedupKey(alert, generation),
    payload: {
      summary: alertSummary(alert, generation > 0),
      ...affected(alert, n.receiver),
      severity: pagerDutySeverity(alert.labels.severity),
      ...timestamp(alert.startsAt),
      custom_details: details,
    },
    ...linksOf(n, alertLinks(alert, n.externalURL, n.grafanaUrl)),
    ...client(n),
  };
  if (utf8Bytes(JSON.stringify(event)) <= PAGERDUTY_MAX_EVENT_BYTES) return event;
  return { ...event, payload: { ...event.payload, custom_details: shortDetails(details) } };
}

/** The storm's one event: `trigger` while it fires, else `resolve`. */
function stormEvent(n: Notification): RenderedEvent {
  const dedup_key = groupDedupKey(n.groupKey);
  const firing = n.alerts.filter((a) => a.status === 'firing');
  if (firing.length === 0) return { event_action: 'resolve', dedup_key };
  const d = summarize(n);
  const text = digestText(n, PLAIN, 'en');
  const group = Object.keys(n.groupLabels).length ? n.groupLabels : n.commonLabels;
  const names = d.byAlertname.map((c) => c.value).filter(Boolean);
  const total = n.alerts.length + n.truncatedAlerts;
  const summary = `Alert storm: ${total} alerts (${d.firing} firing)${names.length ? ` · ${names.slice(0, 5).join(', ')}${names.length > 5 ? ', …' : ''}` : ''}`;
  return {
    event_action: 'trigger',
    dedup_key,
    payload: {
      summary: truncateChars(summary, PAGERDUTY_MAX_SUMMARY_CHARS),
      // What the whole group shares; a storm rarely shares an instance.
      source:
        n.commonLabels.instance || n.commonLabels.cluster || n.commonLabels.namespace || n.receiver || 'alertmanager',
      severity: highestSeverity(firing.map((a) => pagerDutySeverity(a.labels.severity))),
      ...timestamp(firing.map((a) => a.startsAt).sort()[0]!),
      ...(n.commonLabels.alertname && { class: n.commonLabels.alertname }),
      custom_details: {
        group_labels: group,
        summary: text.summary,
        counts: text.counts,
        top_alerts: text.top,
        ...(text.cause.length && { likely_cause: text.cause }),
        ...(text.more && { left_out: text.more }),
        firing_fingerprints: firing.slice(0, STORM_FINGERPRINTS).map((a) => a.fingerprint),
        started: formatTime(firing.map((a) => a.startsAt).sort()[0]!),
      },
    },
    ...linksOf(n, text.silenceUrl ? [{ label: 'Silence', url: text.silenceUrl }] : []),
    ...client(n),
  };
}

/** The Acknowledge page first (its link is per message), then the alert's Graph (the chart), Runbook and Silence links. */
function linksOf(n: Notification, links: Link[]): { links?: PagerDutyLink[] } {
  const ack = acknowledgeLink(n);
  const all: PagerDutyLink[] = [
    ...(ack ? [{ href: ack.url, text: ack.label }] : []),
    ...links.map((l) => ({ href: l.url, text: l.label })),
  ];
  return all.length ? { links: all } : {};
}

function client(n: Notification): { client: string; client_url?: string } {
  const url = n.externalURL ? httpLink(n.externalURL) : undefined;
  return { client: PAGERDUTY_CLIENT, ...(url && { client_url: url }) };
}

/** `startsAt` as ISO 8601 with milliseconds; left out when it does not parse (PagerDuty then uses the time of receipt). */
function timestamp(startsAt: string): { timestamp?: string } {
  const ms = Date.parse(startsAt);
  return Number.isNaN(ms) ? {} : { timestamp: new Date(ms).toISOString() };
}
