/**
 * Escalation: a critical alert still firing and unacknowledged after the configured delay is sent,
 * once, to the escalation target (a second SNS topic or Slack webhook), with its own Acknowledge link.
 * The check claims the escalation in the store first, so a schedule that fires twice (retries, an
 * HA peer's timer) sends once, and an ack or resolve that lost its cancel still prevents it.
 */
import { deliver } from '../delivery.js';
import type { Alert } from '../alertmanager/schema.js';
import type { Channel } from '../channels/types.js';
import type { Logger } from '../logger.js';
import type { AckLinks } from './links.js';
import { noticeFromRecords } from './notices.js';
import type { EscalationJob } from './scheduler.js';
import type { AckStore } from './types.js';

/** Severities that escalate (the label `severity`, as the shipped rules set it). */
export const ESCALATED_SEVERITIES: ReadonlySet<string> = new Set(['critical']);

export interface EscalationDeps {
  store: AckStore;
  /** The escalation target channels (`escalation-sns`, `escalation-slack`); at least one. */
  targets: Channel[];
  links?: AckLinks;
  delivery: { timeoutMs: number; retries: number; budgetMs?: number };
  logger: Logger;
  /** Epoch milliseconds. */
  now(): number;
}

/** Whether an alert escalates when nobody acknowledges it: firing with severity `critical`. */
export function escalates(alert: Pick<Alert, 'status' | 'labels'>): boolean {
  return alert.status === 'firing' && ESCALATED_SEVERITIES.has(alert.labels.severity ?? '');
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
  const record = await deps.store.claimEscalation(job.fingerprint, job.startsAt, now);
  if (!record) {
    const current = await deps.store.get(job.fingerprint, now);
    log.info('escalation skipped', { reason: skipReason(current, job) });
    return 'skipped';
  }
  const outcomes = await Promise.allSettled(deps.targets.map(async (target) => {
    const url = deps.links?.url([job.fingerprint], record.groupKey, target.name, now);
    await deliver(target, noticeFromRecords('escalation', [record], url), { ...deps.delivery, logger: log });
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
  return 'escalated';
}

function skipReason(record: Awaited<ReturnType<AckStore['get']>>, job: EscalationJob): string {
  if (!record) return 'unknown or expired';
  if (record.startsAt !== job.startsAt) return 'a newer occurrence';
  if (record.acknowledgement) return 'acknowledged';
  if (record.status === 'resolved') return 'resolved';
  return record.escalation ? `escalation ${record.escalation.state}` : 'not scheduled';
}
