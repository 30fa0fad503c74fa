/**
 * The checking half of the dead-man's switch. Run on a schedule (EventBridge Scheduler in AWS, a
 * timer under `npm start`): for each Alertmanager that was seen, a heartbeat older than
 * `HEARTBEAT_TIMEOUT_SECONDS` raises `AlertingPipelineHeartbeatMissing` through the normal pipeline;
 * once heartbeats are back it is resolved. Every run re-sends the firing alert while it lasts: the
 * dedupe ledger absorbs the repeats and repairs a channel that failed, as Alertmanager's
 * `repeat_interval` does.
 */
import type { Enrichment } from '../enrich/types.js';
import type { Logger } from '../core/logger.js';
import type { Metrics } from '../metrics/catalogue.js';
import { processGroup, type PipelineDeps } from '../pipeline/index.js';
import { heartbeatMissingMessage } from './alert.js';
import type { HeartbeatRecord, HeartbeatStore } from '../store/heartbeat.js';

export interface HeartbeatCheckDeps {
  store: HeartbeatStore;
  /** The pipeline the alert goes through (channels, routing, dedupe, acknowledgement, escalation). */
  pipeline: PipelineDeps;
  settings: { alertname: string; timeoutSeconds: number };
  metrics: Metrics;
  logger: Logger;
  /** Epoch milliseconds. */
  now(): number;
}

/** What one check found, per Alertmanager. */
export type HeartbeatState = 'ok' | 'missing' | 'raised' | 'resolving' | 'resolved' | 'failed';

/**
 * Checks every Alertmanager seen. Never throws: a failure for one is logged and the others are checked.
 * @returns each Alertmanager's state after the check
 */
export async function checkHeartbeats(deps: HeartbeatCheckDeps): Promise<Record<string, HeartbeatState>> {
  const states: Record<string, HeartbeatState> = {};
  let records: HeartbeatRecord[];
  try {
    records = await deps.store.all();
  } catch (err) {
    deps.logger.error('heartbeat check failed', { error: err });
    return states;
  }
  for (const record of records) {
    try {
      states[record.alertmanager] = await checkOne(record, deps);
    } catch (err) {
      states[record.alertmanager] = 'failed';
      deps.logger.error('heartbeat check failed', { alertmanager: record.alertmanager, error: err });
    }
  }
  // Every run reports, even with no Alertmanager seen yet: the CloudWatch alarm on the plain name
  // (no dimensions, Maximum) treats no data as a check that stopped. The empty `alertmanager` is
  // "any Alertmanager"; the EMF adapter drops empty dimensions.
  const missing = records.some((r) => deps.now() - r.lastSeenMs > deps.settings.timeoutSeconds * 1000);
  deps.metrics.set('heartbeat_missing', { alertmanager: '' }, missing ? 1 : 0);
  return states;
}

async function checkOne(record: HeartbeatRecord, deps: HeartbeatCheckDeps): Promise<HeartbeatState> {
  const now = deps.now();
  const { alertmanager, lastSeenMs } = record;
  const missing = now - lastSeenMs > deps.settings.timeoutSeconds * 1000;
  deps.metrics.set('heartbeat_missing', { alertmanager }, missing ? 1 : 0);
  deps.metrics.set('heartbeat_last_seen_timestamp_seconds', { alertmanager }, lastSeenMs / 1000);
  if (missing) {
    const sinceMs = record.missingSinceMs ?? now;
    // Of concurrent checks, the one that marks it raises it; the others find the mark next time.
    if (record.missingSinceMs === undefined && !(await deps.store.markMissing(alertmanager, sinceMs))) return 'missing';
    if (record.missingSinceMs === undefined) deps.logger.error('heartbeat missing', { alertmanager, lastSeen: new Date(lastSeenMs).toISOString(), timeoutSeconds: deps.settings.timeoutSeconds });
    await send(heartbeatMissingMessage({ alertmanager, heartbeatAlertname: deps.settings.alertname, lastSeenMs, sinceMs, timeoutSeconds: deps.settings.timeoutSeconds }), deps);
    return record.missingSinceMs === undefined ? 'raised' : 'missing';
  }
  if (record.missingSinceMs === undefined) return 'ok';
  const message = heartbeatMissingMessage({ alertmanager, heartbeatAlertname: deps.settings.alertname, lastSeenMs, sinceMs: record.missingSinceMs, timeoutSeconds: deps.settings.timeoutSeconds }, now);
  // Cleared only once every channel has the resolved message; until then each check repairs it.
  if (!(await send(message, deps))) return 'resolving';
  await deps.store.clearMissing(alertmanager, record.missingSinceMs);
  deps.logger.info('heartbeat back', { alertmanager, lastSeen: new Date(lastSeenMs).toISOString() });
  return 'resolved';
}

/** @returns whether every channel has it */
async function send(message: ReturnType<typeof heartbeatMissingMessage>, deps: HeartbeatCheckDeps): Promise<boolean> {
  const result = await processGroup(message, { ...deps.pipeline, enrich: notFromPrometheus });
  return result.ok;
}

/** The pipeline's own alert has no rule expression to ask Prometheus about. */
async function notFromPrometheus(alerts: { fingerprint: string }[]): Promise<Map<string, Enrichment>> {
  return new Map(alerts.map((a) => [a.fingerprint, { status: 'unavailable', kind: 'unknown', reason: 'raised by the pipeline itself, not by a Prometheus rule', cause: 'no_query' }]));
}
