/**
 * The pipeline's own alert for a silent Alertmanager, `AlertingPipelineHeartbeatMissing`, shaped as
 * an Alertmanager webhook message so it takes the normal path: routing, dedupe, acknowledgement
 * links, escalation (it is critical), flapping, resolve.
 */
import { createHash } from 'node:crypto';
import { GO_ZERO_TIME, type WebhookMessage } from '../alertmanager/schema.js';

export const HEARTBEAT_MISSING_ALERTNAME = 'AlertingPipelineHeartbeatMissing';
/** `receiver` of the message (no Alertmanager route sent it). */
export const PIPELINE_RECEIVER = 'llm-alert-pipeline';

export interface MissingHeartbeat {
  /** The silent Alertmanager's `externalURL`. */
  alertmanager: string;
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
 * @returns a version-4 webhook message with one alert, labelled `alertname`, `alertmanager`, `severity=critical`
 */
export function heartbeatMissingMessage(missing: MissingHeartbeat, resolvedAtMs?: number): WebhookMessage {
  const labels = { alertname: HEARTBEAT_MISSING_ALERTNAME, alertmanager: missing.alertmanager, severity: 'critical' };
  const annotations = {
    summary: `No ${missing.heartbeatAlertname} heartbeat from Alertmanager ${missing.alertmanager} since ${new Date(missing.lastSeenMs).toISOString()}`,
    description:
      `The alerting pipeline has received no ${missing.heartbeatAlertname} alert from ${missing.alertmanager} for more than ` +
      `${missing.timeoutSeconds} s (HEARTBEAT_TIMEOUT_SECONDS). Alerts routed through this Alertmanager may reach nobody: ` +
      'check that it runs, that Prometheus reaches it, and that its route sends the heartbeat here.',
  };
  const status = resolvedAtMs === undefined ? 'firing' : 'resolved';
  return {
    version: '4',
    groupKey: `{}:{alertmanager=${JSON.stringify(missing.alertmanager)}, alertname="${HEARTBEAT_MISSING_ALERTNAME}"}`,
    truncatedAlerts: 0,
    status,
    receiver: PIPELINE_RECEIVER,
    groupLabels: { alertname: HEARTBEAT_MISSING_ALERTNAME, alertmanager: missing.alertmanager },
    commonLabels: labels,
    commonAnnotations: annotations,
    externalURL: missing.alertmanager,
    alerts: [{
      status,
      labels,
      annotations,
      startsAt: new Date(missing.sinceMs).toISOString(),
      endsAt: resolvedAtMs === undefined ? GO_ZERO_TIME : new Date(resolvedAtMs).toISOString(),
      generatorURL: '',
      fingerprint: fingerprintOf(labels),
    }],
  };
}

/** A stable 16-hex-digit fingerprint of a label set (the shape of Alertmanager's; not its FNV hash). */
function fingerprintOf(labels: Record<string, string>): string {
  const canonical = JSON.stringify(Object.keys(labels).sort().map((k) => [k, labels[k]]));
  return createHash('sha256').update(canonical).digest('hex').slice(0, 16);
}
