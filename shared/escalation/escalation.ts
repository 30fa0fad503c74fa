/**
 * Escalation: a critical alert still firing and unacknowledged after the configured delay is sent,
 * once, to the escalation target (a second SNS topic or Slack webhook), with its own Acknowledge link.
 * The check claims the escalation in the store first, so a schedule that fires twice (retries, an
 * HA peer's timer) sends once, and an ack or resolve that lost its cancel still prevents it.
 * Before it claims, it asks whether the alert is over: Alertmanager holds a resolve until the group's
 * next `group_interval` flush, so an alert that recovered minutes before it came due may still be
 * firing here. It asks the sources of truth the re-fire rule asks (`shared/alert-state/`: Prometheus's
 * `ALERTS`, then Alertmanager's alerts); one that says resolved (no firing series, not listed) cancels
 * it, and the history says which source. With `ALERTMANAGER_URL` set it then asks whether the alert is
 * silenced or inhibited there: if so it is not escalated either (the history names the silences or
 * alerts that muted it). When no source is configured or none can say, it escalates anyway (paging
 * once too often beats missing a page), and the history says it could not be checked.
 */
import { deliver } from '../channels/deliver.js';
import type { Channel } from '../channels/channel.js';
import type { Logger } from '../core/logger.js';
import { noticeFromRecords } from './notices.js';
import type { Notification } from '../render/notification.js';
import type { EscalationJob } from './scheduler.js';
import { alertStatus, AlertStatusError } from '../alertmanager/alert-status.js';
import { sentByGrafana } from '../alertmanager/grafana.js';
import type { AlertRecord, AlertStores } from '../store/alert-record.js';
import type { Endpoint } from '../core/endpoint.js';
import type { AlertStateSource, Verdict } from '../alert-state/types.js';

/** Budget of the source-of-truth questions of one check, milliseconds (each source has its own time-out within). */
export const STATE_CHECK_TIMEOUT_MS = 5_000;

export interface EscalationDeps {
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
  /**
   * Set when `ALERTMANAGER_URL` is (`url` and `credentials`, see `core/endpoint.ts`): asked whether the alert is
   * silenced or inhibited before it escalates; `timeoutMs` bounds the request.
   */
  alertmanager?: Endpoint & { timeoutMs: number };
  /**
   * The sources of truth the re-fire rule asks (`PROMETHEUS_URL`, `ALERTMANAGER_URL`): asked whether the
   * alert still fires before it escalates; unset when neither is configured (it then escalates unasked).
   */
  alertState?: AlertStateSource;
  /** `GRAFANA_URL`: the escalation message links the alert to the dashboard there, as the first message did. */
  grafanaUrl?: string;
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

/**
 * Runs one check: asks whether the alert is over, silenced or inhibited, claims the escalation (only
 * while firing, unacknowledged and scheduled), then sends to every target. A target that accepted it
 * joins the alert's channels (it gets the ack follow-up).
 * @returns `escalated`, or `skipped` when acknowledged, resolved (here or at a source of truth), silenced,
 *   inhibited, cancelled, already sent or unknown
 * @throws Error when every target failed, after handing the claim back, so a retry (Scheduler's) can send
 */
export async function checkEscalation(job: EscalationJob, deps: EscalationDeps): Promise<'escalated' | 'skipped'> {
  const log = deps.logger.child({ fingerprint: job.fingerprint, startsAt: job.startsAt });
  const now = deps.now();
  const due = await dueRecord(job, deps);
  const verdict = due && (await stateOf(due, deps, log));
  if (verdict?.state === 'resolved') return cancelAsOver(job, verdict, deps, log);
  if (due && deps.alertmanager && (await suppressed(due, job, deps, log))) return 'skipped';
  const record = await deps.stores.escalations.claim(job.fingerprint, job.startsAt, now);
  if (!record) {
    const current = await deps.stores.records.get(job.fingerprint, now);
    log.info('escalation skipped', { reason: skipReason(current, job) });
    return 'skipped';
  }
  const outcomes = await Promise.allSettled(
    deps.targets.map(async (target) => {
      const url = deps.links?.url([record], record.groupKey, target, now);
      await deliver(target, escalationNotice(record, url, deps), { ...deps.delivery, logger: log });
      return target.name;
    }),
  );
  const sent = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
  const errors = outcomes.flatMap((o, i) =>
    o.status === 'rejected' ? [{ target: deps.targets[i]!.name, error: (o.reason as Error).message }] : [],
  );
  for (const failure of errors) {
    log.error('escalation failed', failure);
    await deps.stores.history.add(
      job.fingerprint,
      { type: 'escalation failed', startsAt: job.startsAt, ...failure },
      deps.now(),
    );
  }
  if (sent.length === 0) {
    await deps.stores.escalations.release(job.fingerprint, job.startsAt);
    throw new Error(
      `escalation of ${job.fingerprint} failed on every target: ${errors.map((e) => `${e.target}: ${e.error}`).join('; ')}`,
    );
  }
  for (const target of sent) {
    await deps.stores.history.add(
      job.fingerprint,
      { type: 'escalated', target, startsAt: job.startsAt, ...verdictFields(verdict) },
      deps.now(),
    );
  }
  await deps.stores.records.addChannels(job.fingerprint, job.startsAt, sent, deps.now());
  log.info('escalated', { targets: sent });
  await updateThreads(record, deps, log, now);
  return 'escalated';
}

/** Tells the threaded channels that carried the alert (their message's state line and a thread reply). */
async function updateThreads(record: AlertRecord, deps: EscalationDeps, log: Logger, now: number): Promise<void> {
  const carried = (deps.threaded ?? []).filter((c) => record.channels.includes(c.name));
  await Promise.all(
    carried.map(async (channel) => {
      const url = deps.links?.url([record], record.groupKey, channel, now);
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

/**
 * What the sources of truth say of the alert now (`shared/alert-state/`; Grafana's alerts are `unknown`
 * there). Never throws: a source that cannot answer is `unknown`, and logged.
 */
async function stateOf(record: AlertRecord, deps: EscalationDeps, log: Logger): Promise<Verdict> {
  const fallback: Verdict = {
    state: 'unknown',
    source: 'none',
    reason: deps.alertState ? 'no answer' : 'no source of truth configured (PROMETHEUS_URL, ALERTMANAGER_URL)',
  };
  const verdict = deps.alertState
    ? await deps.alertState
        .statesOf([record.alert], AbortSignal.timeout(STATE_CHECK_TIMEOUT_MS))
        .then((verdicts) => verdicts.get(record.fingerprint) ?? fallback)
        .catch((err: Error): Verdict => ({ ...fallback, reason: err.message }))
    : fallback;
  if (verdict.state === 'unknown' && deps.alertState)
    log.warn('escalating without knowing whether the alert still fires', {
      source: verdict.source,
      reason: verdict.reason,
    });
  return verdict;
}

/** Cancels the escalation of an alert a source of truth says is over; the history says which source. */
async function cancelAsOver(
  job: EscalationJob,
  verdict: Verdict,
  deps: EscalationDeps,
  log: Logger,
): Promise<'skipped'> {
  const source = verdict.source === 'none' ? undefined : verdict.source;
  if (await deps.stores.escalations.cancel(job.fingerprint, job.startsAt, 'resolved', deps.now())) {
    await deps.stores.history.add(
      job.fingerprint,
      { type: 'escalation cancelled', reason: 'resolved', ...(source && { source }), startsAt: job.startsAt },
      deps.now(),
    );
  }
  log.info('escalation skipped', { reason: 'resolved', source: verdict.source });
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

/**
 * Cancels the escalation when Alertmanager reports the alert silenced or inhibited.
 * @returns true when it is muted there (cancelled here, by this check or a concurrent one)
 */
async function suppressed(
  record: AlertRecord,
  job: EscalationJob,
  deps: EscalationDeps,
  log: Logger,
): Promise<boolean> {
  // Grafana's alerts live in Grafana's own Alertmanager: ALERTMANAGER_URL's cannot say they are muted.
  if (sentByGrafana(record.alert)) return false;
  let status: Awaited<ReturnType<typeof alertStatus>>;
  try {
    status = await alertStatus(deps.alertmanager!, record.alert, deps.alertmanager!.timeoutMs);
  } catch (err) {
    if (!(err instanceof AlertStatusError)) throw err;
    log.warn('escalating without silence check', { error: err.message });
    return false;
  }
  if (status?.state !== 'suppressed' || (!status.silencedBy.length && !status.inhibitedBy.length)) return false;
  const muted = { silencedBy: status.silencedBy, inhibitedBy: status.inhibitedBy };
  const reason = status.silencedBy.length ? 'silenced' : 'inhibited';
  if (await deps.stores.escalations.cancel(job.fingerprint, job.startsAt, reason, deps.now())) {
    await deps.stores.history.add(
      job.fingerprint,
      { type: 'escalation cancelled', reason, ...muted, startsAt: job.startsAt },
      deps.now(),
    );
  }
  log.info('escalation skipped', { reason, ...muted });
  return true;
}

function skipReason(record: Awaited<ReturnType<AlertStores['records']['get']>>, job: EscalationJob): string {
  if (!record) return 'unknown or expired';
  if (record.startsAt !== job.startsAt) return 'a newer occurrence';
  if (record.acknowledgement) return 'acknowledged';
  if (record.status === 'resolved') return 'resolved';
  return record.escalation ? `escalation ${record.escalation.state}` : 'not scheduled';
}
