/**
 * Escalation: a critical alert still firing and unacknowledged after the configured delay is sent,
 * once, to the escalation target (a second SNS topic or Slack webhook), with its own Acknowledge link.
 * The check claims the escalation in the store first, so a schedule that fires twice (retries, an
 * HA peer's timer) sends once, and an ack or resolve that lost its cancel still prevents it. With
 * `ALERTMANAGER_URL` set it first asks Alertmanager: an alert silenced or inhibited there by then is
 * not escalated (the escalation is cancelled, the history says which silences or alerts muted it); if
 * Alertmanager cannot say, it escalates anyway (paging once too often beats missing a page).
 */
import { deliver } from '../channels/deliver.js';
import type { Channel } from '../channels/channel.js';
import type { Logger } from '../core/logger.js';
import { noticeFromRecords } from './notices.js';
import type { Notification } from '../render/notification.js';
import type { EscalationJob } from './scheduler.js';
import { alertStatus, AlertStatusError } from '../alertmanager/alert-status.js';
import type { AlertRecord, AlertRecordStore } from '../store/alert-record.js';

export interface EscalationDeps {
  store: AlertRecordStore;
  /** The escalation target channels (`escalation-sns`, `escalation-slack`); at least one. */
  targets: Channel[];
  /**
   * Channels that keep one thread per group (the Slack app): when they carried the alert, the escalation
   * also updates their message and replies in its thread. Their failure does not fail the escalation.
   */
  threaded?: Channel[];
  /** Signs the escalation message's Acknowledge link (`AckLinks` of `shared/ack/links.ts`); unset: no link. */
  links?: { url(fingerprints: string[], group: string, channel: string, nowMs: number): string };
  delivery: { timeoutMs: number; retries: number; budgetMs?: number };
  /** Set when `ALERTMANAGER_URL` is: asked whether the alert is silenced or inhibited before it escalates. */
  alertmanager?: { url: string; timeoutMs: number };
  /** `GRAFANA_URL`: the escalation message links the alert to the dashboard there, as the first message did. */
  grafanaUrl?: string;
  logger: Logger;
  /** Epoch milliseconds. */
  now(): number;
}

/** The escalation message about `record`, with its Acknowledge link and, with `GRAFANA_URL`, its dashboard link. */
function escalationNotice(record: AlertRecord, acknowledgeUrl: string | undefined, deps: Pick<EscalationDeps, 'grafanaUrl'>): Notification {
  return { ...noticeFromRecords('escalation', [record], acknowledgeUrl), ...(deps.grafanaUrl && { grafanaUrl: deps.grafanaUrl }) };
}

/**
 * Runs one check: claims the escalation (only while firing, unacknowledged and scheduled), then sends
 * to every target. A target that accepted it joins the alert's channels (it gets the ack follow-up).
 * @returns `escalated`, or `skipped` when acknowledged, resolved, cancelled, already sent or unknown
 * @throws Error when every target failed, after handing the claim back, so a retry (Scheduler's) can send
 */
export async function checkEscalation(job: EscalationJob, deps: EscalationDeps): Promise<'escalated' | 'skipped'> {
  const log = deps.logger.child({ fingerprint: job.fingerprint, startsAt: job.startsAt });
  const now = deps.now();
  if (deps.alertmanager && (await suppressed(job, deps, log))) return 'skipped';
  const record = await deps.store.claimEscalation(job.fingerprint, job.startsAt, now);
  if (!record) {
    const current = await deps.store.get(job.fingerprint, now);
    log.info('escalation skipped', { reason: skipReason(current, job) });
    return 'skipped';
  }
  const outcomes = await Promise.allSettled(deps.targets.map(async (target) => {
    const url = deps.links?.url([job.fingerprint], record.groupKey, target.name, now);
    await deliver(target, escalationNotice(record, url, deps), { ...deps.delivery, logger: log });
    return target.name;
  }));
  const sent = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
  const errors = outcomes.flatMap((o, i) => (o.status === 'rejected' ? [{ target: deps.targets[i]!.name, error: (o.reason as Error).message }] : []));
  for (const failure of errors) {
    log.error('escalation failed', failure);
    await deps.store.addHistory(job.fingerprint, { type: 'escalation failed', startsAt: job.startsAt, ...failure }, deps.now());
  }
  if (sent.length === 0) {
    await deps.store.releaseEscalation(job.fingerprint, job.startsAt);
    throw new Error(`escalation of ${job.fingerprint} failed on every target: ${errors.map((e) => `${e.target}: ${e.error}`).join('; ')}`);
  }
  for (const target of sent) {
    await deps.store.addHistory(job.fingerprint, { type: 'escalated', target, startsAt: job.startsAt }, deps.now());
  }
  await deps.store.addChannels(job.fingerprint, job.startsAt, sent, deps.now());
  log.info('escalated', { targets: sent });
  await updateThreads(record, deps, log, now);
  return 'escalated';
}

/** Tells the threaded channels that carried the alert (their message's state line and a thread reply). */
async function updateThreads(record: AlertRecord, deps: EscalationDeps, log: Logger, now: number): Promise<void> {
  const carried = (deps.threaded ?? []).filter((c) => record.channels.includes(c.name));
  await Promise.all(carried.map(async (channel) => {
    const url = deps.links?.url([record.fingerprint], record.groupKey, channel.name, now);
    await deliver(channel, escalationNotice(record, url, deps), { ...deps.delivery, logger: log }).catch((err: Error) => {
      log.warn('escalation thread update failed', { channel: channel.name, error: err.message });
    });
  }));
}

/**
 * Cancels the escalation when Alertmanager reports the alert silenced or inhibited.
 * @returns true when it is muted there (cancelled here, by this check or a concurrent one)
 */
async function suppressed(job: EscalationJob, deps: EscalationDeps, log: Logger): Promise<boolean> {
  const record = await deps.store.get(job.fingerprint, deps.now());
  // Nothing to ask about when the claim would refuse anyway; it logs why.
  if (!record || record.startsAt !== job.startsAt || record.escalation?.state !== 'scheduled') return false;
  let status: Awaited<ReturnType<typeof alertStatus>>;
  try {
    status = await alertStatus(deps.alertmanager!.url, record.alert, deps.alertmanager!.timeoutMs);
  } catch (err) {
    if (!(err instanceof AlertStatusError)) throw err;
    log.warn('escalating without silence check', { error: err.message });
    return false;
  }
  if (status?.state !== 'suppressed' || (!status.silencedBy.length && !status.inhibitedBy.length)) return false;
  const muted = { silencedBy: status.silencedBy, inhibitedBy: status.inhibitedBy };
  const reason = status.silencedBy.length ? 'silenced' : 'inhibited';
  if (await deps.store.cancelEscalation(job.fingerprint, job.startsAt, reason, deps.now())) {
    await deps.store.addHistory(job.fingerprint, { type: 'escalation cancelled', reason, ...muted, startsAt: job.startsAt }, deps.now());
  }
  log.info('escalation skipped', { reason, ...muted });
  return true;
}

function skipReason(record: Awaited<ReturnType<AlertRecordStore['get']>>, job: EscalationJob): string {
  if (!record) return 'unknown or expired';
  if (record.startsAt !== job.startsAt) return 'a newer occurrence';
  if (record.acknowledgement) return 'acknowledged';
  if (record.status === 'resolved') return 'resolved';
  return record.escalation ? `escalation ${record.escalation.state}` : 'not scheduled';
}
