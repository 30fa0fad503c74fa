/**
 * Escalation: a critical alert still firing and unacknowledged after the configured delay is sent,
 * once, to the escalation target (a second SNS topic or Slack webhook), with its own Acknowledge link.
 * The check claims the escalation in the store first, so a schedule that fires twice (retries, an
 * HA peer's timer) sends once, and an ack or resolve that lost its cancel still prevents it.
 * Before it claims, it asks whether the alert is over: Alertmanager holds a resolve until the group's
 * next `group_interval` flush, so an alert that recovered minutes before it came due may still be
 * firing here. It asks the sources of truth the re-fire rule asks (`shared/alert-state/`: Prometheus's
 * `ALERTS`, then Alertmanager's alerts); one that says resolved (no firing series, not listed) cancels
 * it, and the history says which source. With `ALERTMANAGER_URL` set, the same answer of Alertmanager
 * (one request per check, `state-check.ts`) says whether the alert is silenced or inhibited there: if so
 * it is not escalated either (the history names the silences or alerts that muted it). When no source is configured or none can say, it escalates anyway (paging
 * once too often beats missing a page), and the history says it could not be checked.
 */
import { deliver } from '../channels/deliver.js';
import { deliveryFailureReason, type Channel } from '../channels/channel.js';
import type { Metrics } from '../metrics/catalogue.js';
import type { Logger } from '../core/logger.js';
import { noticeFromRecords } from './notices.js';
import type { Notification } from '../render/notification.js';
import type { EscalationJob } from './scheduler.js';
import { checkState, type StateSources } from './state-check.js';
import type { AlertRecord, AlertStores, HistoryInput } from '../store/alert-record.js';
import type { Verdict } from '../alert-state/types.js';

export interface EscalationDeps extends StateSources {
  stores: AlertStores;
  /** The escalation target channels (`escalation-sns`, `escalation-slack`); at least one. */
  targets: Channel[];
  /**
   * Channels that keep one thread per group (the Slack app): when they carried the alert, the escalation
   * also updates their message and replies in its thread. Their failure does not fail the escalation.
   */
  threaded?: Channel[];
  /** Signs the escalation message's Acknowledge link (`AckLinks` of `shared/ack/links.ts`); unset: no link. */
  links?: {
    url(
      alerts: readonly { fingerprint: string; startsAt: string }[],
      group: string,
      channel: Pick<Channel, 'name' | 'locale'>,
      nowMs: number,
    ): string;
  };
  delivery: { timeoutMs: number; retries: number; budgetMs?: number };
  /** `GRAFANA_URL`: the escalation message links the alert to the dashboard there, as the first message did. */
  grafanaUrl?: string;
  /**
   * Counts each target's outcome in `notifications_total{channel, outcome, reason}`, as the pipeline counts its
   * channels': a target that failed while another accepted is not retried, so it must reach the delivery-failure
   * alarm (CloudWatch `PipelineDeliveryFailures`, the rule `AlertPipelineDeliveryFailing`). Unset: not counted.
   */
  metrics?: Metrics;
  logger: Logger;
  /** Epoch milliseconds. */
  now(): number;
}

/** The escalation message about `record`, with its Acknowledge link and, with `GRAFANA_URL`, its dashboard link. */
function escalationNotice(
  record: AlertRecord,
  acknowledgeUrl: string | undefined,
  deps: Pick<EscalationDeps, 'grafanaUrl'>,
): Notification {
  return {
    ...noticeFromRecords('escalation', [record], acknowledgeUrl),
    ...(deps.grafanaUrl && { grafanaUrl: deps.grafanaUrl }),
  };
}

/** One check as its stages see it: the job, the dependencies, its logger and its start time (epoch milliseconds). */
interface Check {
  job: EscalationJob;
  deps: EscalationDeps;
  log: Logger;
  nowMs: number;
}

/**
 * Runs one check: asks whether the alert is over, silenced or inhibited (Alertmanager once: see
 * `state-check.ts`), claims the escalation (only while firing, unacknowledged and scheduled), then sends to
 * every target. A target that accepted it joins the alert's channels (it gets the ack follow-up).
 * @returns `escalated`, or `skipped` when acknowledged, resolved (here or at a source of truth), silenced,
 *   inhibited, cancelled, already sent or unknown
 * @throws Error when every target failed, after handing the claim back, so a retry (Scheduler's) can send
 */
export async function checkEscalation(job: EscalationJob, deps: EscalationDeps): Promise<'escalated' | 'skipped'> {
  const check: Check = {
    job,
    deps,
    log: deps.logger.child({ fingerprint: job.fingerprint, startsAt: job.startsAt }),
    nowMs: deps.now(),
  };
  const due = await dueRecord(job, deps);
  const state = due && (await checkState(due, deps, check.log, check.nowMs));
  if (state?.verdict.state === 'resolved') return cancel(check, { reason: 'resolved', verdict: state.verdict });
  if (state?.muted)
    return cancel(check, { reason: state.muted.silencedBy.length ? 'silenced' : 'inhibited', ...state.muted });
  const record = await deps.stores.escalations.claim(job.fingerprint, job.startsAt, check.nowMs);
  if (!record) {
    const current = await deps.stores.records.get(job.fingerprint, check.nowMs);
    check.log.info('escalation skipped', { reason: skipReason(current, job) });
    return 'skipped';
  }
  const sent = await sendToTargets(check, record);
  for (const target of sent)
    await addHistory(check, { type: 'escalated', target, startsAt: job.startsAt, ...verdictFields(state?.verdict) });
  await deps.stores.records.addChannels(job.fingerprint, job.startsAt, sent, deps.now());
  check.log.info('escalated', { targets: sent });
  await updateThreads(record, check);
  return 'escalated';
}

/**
 * Sends the escalation message to every target at once.
 * @returns the names of the targets that accepted it (at least one)
 * @throws Error when every target failed, after handing the claim back (each failure is in the history)
 */
async function sendToTargets(check: Check, record: AlertRecord): Promise<string[]> {
  const { deps, job, log } = check;
  const outcomes = await Promise.allSettled(
    deps.targets.map(async (target) => {
      const url = deps.links?.url([record], record.groupKey, target, check.nowMs);
      await deliver(target, escalationNotice(record, url, deps), { ...deps.delivery, logger: log });
      return target.name;
    }),
  );
  outcomes.forEach((o, i) =>
    deps.metrics?.inc('notifications_total', {
      channel: deps.targets[i]!.name,
      outcome: o.status === 'fulfilled' ? 'delivered' : 'failed',
      reason: o.status === 'fulfilled' ? 'ok' : deliveryFailureReason(o.reason),
    }),
  );
  const sent = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
  const errors = outcomes.flatMap((o, i) =>
    o.status === 'rejected' ? [{ target: deps.targets[i]!.name, error: (o.reason as Error).message }] : [],
  );
  for (const failure of errors) {
    log.error('escalation failed', failure);
    await addHistory(check, { type: 'escalation failed', startsAt: job.startsAt, ...failure });
  }
  if (sent.length > 0) return sent;
  await deps.stores.escalations.release(job.fingerprint, job.startsAt);
  const summary = errors.map((e) => `${e.target}: ${e.error}`).join('; ');
  throw new Error(`escalation of ${job.fingerprint} failed on every target: ${summary}`);
}

/** Adds `event` to the alert's history, at the clock's time now. */
async function addHistory(check: Check, event: HistoryInput): Promise<void> {
  await check.deps.stores.history.add(check.job.fingerprint, event, check.deps.now());
}

/** Tells the threaded channels that carried the alert (their message's state line and a thread reply). */
async function updateThreads(record: AlertRecord, check: Check): Promise<void> {
  const { deps, log } = check;
  const carried = (deps.threaded ?? []).filter((c) => record.channels.includes(c.name));
  await Promise.all(
    carried.map(async (channel) => {
      const url = deps.links?.url([record], record.groupKey, channel, check.nowMs);
      await deliver(channel, escalationNotice(record, url, deps), { ...deps.delivery, logger: log }).catch(
        (err: Error) => {
          log.warn('escalation thread update failed', { channel: channel.name, error: err.message });
        },
      );
    }),
  );
}

/** The alert's record when its escalation of occurrence `job.startsAt` is still scheduled; else the claim refuses (and logs why). */
async function dueRecord(job: EscalationJob, deps: EscalationDeps): Promise<AlertRecord | undefined> {
  const record = await deps.stores.records.get(job.fingerprint, deps.now());
  if (!record || record.startsAt !== job.startsAt || record.escalation?.state !== 'scheduled') return undefined;
  return record.status === 'firing' && !record.acknowledgement ? record : undefined;
}

/** Why a check cancels: over at a source of truth (which one), or muted in Alertmanager (by what). */
type Cancellation =
  | { reason: 'resolved'; verdict: Verdict }
  | { reason: 'silenced' | 'inhibited'; silencedBy: string[]; inhibitedBy: string[] };

/**
 * Cancels the escalation of an alert that is over or muted (here, by this check or a concurrent one);
 * the history says why: the source that said over, or the silences or inhibiting alerts.
 */
async function cancel(check: Check, why: Cancellation): Promise<'skipped'> {
  const { job, deps } = check;
  const details =
    why.reason === 'resolved'
      ? { ...(why.verdict.source !== 'none' && { source: why.verdict.source }) }
      : { silencedBy: why.silencedBy, inhibitedBy: why.inhibitedBy };
  if (await deps.stores.escalations.cancel(job.fingerprint, job.startsAt, why.reason, deps.now()))
    await addHistory(check, { type: 'escalation cancelled', reason: why.reason, ...details, startsAt: job.startsAt });
  check.log.info('escalation skipped', {
    reason: why.reason,
    ...(why.reason === 'resolved' ? { source: why.verdict.source } : details),
  });
  return 'skipped';
}

/** What the `escalated` history event says of the sources' answer. */
function verdictFields(verdict: Verdict | undefined) {
  if (!verdict || verdict.state === 'resolved') return {};
  return {
    verdict: verdict.state,
    source: verdict.source,
    ...(verdict.state === 'unknown' && verdict.reason && { verdictReason: verdict.reason }),
  };
}

function skipReason(record: Awaited<ReturnType<AlertStores['records']['get']>>, job: EscalationJob): string {
  if (!record) return 'unknown or expired';
  if (record.startsAt !== job.startsAt) return 'a newer occurrence';
  if (record.acknowledgement) return 'acknowledged';
  if (record.status === 'resolved') return 'resolved';
  return record.escalation ? `escalation ${record.escalation.state}` : 'not scheduled';
}
