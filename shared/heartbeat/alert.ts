/**
 * The pipeline's own alert for a silent Alertmanager cluster, `AlertingPipelineHeartbeatMissing`,
 * shaped as an Alertmanager webhook message so it takes the normal path: routing, dedupe,
 * acknowledgement links, escalation (it is critical), flapping, resolve.
 */
import { createHash } from 'node:crypto';
import { GO_ZERO_TIME, type WebhookMessage } from '../alertmanager/schema.js';
import { formatTime } from '../render/format.js';

export const HEARTBEAT_MISSING_ALERTNAME = 'AlertingPipelineHeartbeatMissing';
/** `receiver` of the message (no Alertmanager route sent it). */
export const PIPELINE_RECEIVER = 'llm-alert-pipeline';

/** Joins the peers of a cluster in its `alertmanager` label. */
export const PEER_SEPARATOR = ',';

/**
 * The labels of the alert raised for a silent cluster: `alertmanager` its peers' `externalURL`s,
 * sorted, joined with {@link PEER_SEPARATOR} (one URL for a single Alertmanager);
 * `heartbeat_fingerprint` the heartbeat alert's `fingerprint`, so two heartbeat alerts through the
 * same peers (two Prometheus servers' Watchdogs) raise two alerts. They are stored when raised: the
 * resolve carries the same labels though a peer joined meanwhile.
 * @param peers the cluster's `externalURL`s
 */
export function missingHeartbeatLabels(peers: string[], fingerprint: string): Record<string, string> {
  return {
    alertname: HEARTBEAT_MISSING_ALERTNAME,
    alertmanager: [...peers].sort().join(PEER_SEPARATOR),
    heartbeat_fingerprint: fingerprint,
    severity: 'critical',
  };
}

export interface MissingHeartbeat {
  /** The labels raised ({@link missingHeartbeatLabels}). */
  labels: Record<string, string>;
  /** The heartbeat alert's name (`HEARTBEAT_ALERTNAME`). */
  heartbeatAlertname: string;
  /** When the last heartbeat arrived, epoch milliseconds. */
  lastSeenMs: number;
  /** When the pipeline raised the alert (its `startsAt`), epoch milliseconds. */
  sinceMs: number;
  /** `HEARTBEAT_TIMEOUT_SECONDS`. */
  timeoutSeconds: number;
}

/**
 * @param resolvedAtMs set when heartbeats are back: the message resolves the alert (`endsAt`)
 * @returns a version-4 webhook message with one alert, labelled `missing.labels`
 */
export function heartbeatMissingMessage(missing: MissingHeartbeat, resolvedAtMs?: number): WebhookMessage {
  const { labels } = missing;
  const alertmanager = labels.alertmanager ?? '';
  const annotations = missingAnnotations(missing, resolvedAtMs);
  const groupLabels = Object.fromEntries(Object.entries(labels).filter(([k]) => k !== 'severity'));
  const status = resolvedAtMs === undefined ? 'firing' : 'resolved';
  return {
    version: '4',
    groupKey: `{}:{${Object.keys(groupLabels)
      .sort()
      .map((k) => `${k}=${JSON.stringify(groupLabels[k])}`)
      .join(', ')}}`,
    truncatedAlerts: 0,
    status,
    receiver: PIPELINE_RECEIVER,
    groupLabels,
    commonLabels: labels,
    commonAnnotations: annotations,
    // One peer's URL stands for the cluster; "(empty externalURL)" is a name, not a URL to link to.
    externalURL: /^https?:\/\//.test(alertmanager) ? alertmanager.split(PEER_SEPARATOR)[0]! : '',
    alerts: [
      {
        status,
        labels,
        annotations,
        startsAt: new Date(missing.sinceMs).toISOString(),
        endsAt: resolvedAtMs === undefined ? GO_ZERO_TIME : new Date(resolvedAtMs).toISOString(),
        generatorURL: '',
        fingerprint: fingerprintOf(labels),
      },
    ],
  };
}

/** The alert's summary (missing since, or back) and description (what to check), naming the Alertmanager or its cluster. */
function missingAnnotations(missing: MissingHeartbeat, resolvedAtMs: number | undefined) {
  const alertmanager = missing.labels.alertmanager ?? '';
  const from = alertmanager.includes(PEER_SEPARATOR)
    ? `any peer of the Alertmanager cluster ${alertmanager}`
    : `Alertmanager ${alertmanager}`;
  return {
    // Resolved: the last heartbeat is the one that just came back, so the message says when it went missing.
    summary:
      resolvedAtMs === undefined
        ? `No ${missing.heartbeatAlertname} heartbeat from ${from} since ${formatTime(new Date(missing.lastSeenMs).toISOString())}`
        : `${missing.heartbeatAlertname} heartbeats from ${from} are back; missing since the alert was raised at ${formatTime(new Date(missing.sinceMs).toISOString())}`,
    description:
      `The alerting pipeline has received no ${missing.heartbeatAlertname} alert from ${from} for more than ` +
      `${missing.timeoutSeconds} s (HEARTBEAT_TIMEOUT_SECONDS). Alerts routed through this Alertmanager may reach nobody: ` +
      'check that it runs, that Prometheus reaches it, and that its route sends the heartbeat here.',
  };
}

/** A stable 16-hex-digit fingerprint of a label set (the shape of Alertmanager's; not its FNV hash). */
function fingerprintOf(labels: Record<string, string>): string {
  const canonical = JSON.stringify(
    Object.keys(labels)
      .sort()
      .map((k) => [k, labels[k]]),
  );
  return createHash('sha256').update(canonical).digest('hex').slice(0, 16);
}
