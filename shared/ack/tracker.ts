/**
 * The pipeline's side of acknowledgements, in the order the pipeline calls it:
 * `prepare` (read who acknowledged the alerts about to be sent) → `decorate` (per channel message:
 * the signed Acknowledge link, and each alert's acknowledgement, so a resolved message says who acked
 * and how long it took) → `record` (after delivery, delivered or not: the alert's state and history,
 * escalation scheduled for a new critical occurrence, cancelled on resolve).
 *
 * It never fails the pipeline: the alert matters more than its bookkeeping, so store errors are logged.
 */
import pLimit from 'p-limit';
import pRetry from 'p-retry';
import type { Alert, WebhookMessage } from '../alertmanager/schema.js';
import type { Acknowledgement, Enrichment } from '../enrich/types.js';
import type { Logger } from '../core/logger.js';
import type { Notification } from '../render/notification.js';
import { escalates } from '../escalation/escalation.js';
import type { AckLinks } from './links.js';
import { normaliseTime } from '../store/alert-record-items.js';
import type { EscalationScheduler } from '../escalation/scheduler.js';
import type { AlertRecordStore, AlertRecord, HistoryBatch } from '../store/alert-record.js';

/** Store calls in flight at once while recording a group (a storm can bring thousands of alerts). */
const CONCURRENCY = 64;
/**
 * New escalations one webhook message may schedule. A storm is seen by everyone already; one
 * escalation per alert would flood the target and the Scheduler API, and outlast the Lambda time-out.
 */
export const MAX_ESCALATIONS_PER_MESSAGE = 20;
/** Retries of a failed `CreateSchedule` (throttling, a network blip) before the escalation is given up. */
const SCHEDULE_RETRIES = 2;

export interface AckTrackerDeps {
  store: AlertRecordStore;
  /** Set when `PUBLIC_URL` and `ACK_SECRET` are: messages carry the Acknowledge link. */
  links?: AckLinks;
  /** Set when an escalation target is configured. */
  escalation?: { delaySeconds: number; scheduler: EscalationScheduler };
  logger: Logger;
  /** Epoch milliseconds. */
  now(): number;
}

/** Acknowledgements of the alerts of one webhook message, by fingerprint (only those of the same occurrence). */
export type AckView = ReadonlyMap<string, Acknowledgement>;

/** One alert after fan-out, with the channels that accepted it in this round. */
export interface SentAlert {
  alert: Alert;
  channels: string[];
  /** The event's generation (`shared/store/occurrence.ts`); absent: 0. */
  generation?: number;
}

export class AckTracker {
  constructor(readonly deps: AckTrackerDeps) {}

  get store(): AlertRecordStore {
    return this.deps.store;
  }

  /** Reads who acknowledged the resolved alerts among `alerts` (firing ones are new: nobody has yet). */
  async prepare(alerts: Alert[]): Promise<AckView> {
    const view = new Map<string, Acknowledgement>();
    const resolved = alerts.filter((a) => a.status === 'resolved');
    if (resolved.length === 0) return view;
    const records = await this.deps.store.getMany(resolved.map((a) => a.fingerprint), this.deps.now()).catch((err: Error) => {
      this.deps.logger.warn('ack state read failed', { alerts: resolved.length, error: err.message });
      return new Map<string, AlertRecord>();
    });
    for (const alert of resolved) {
      const record = records.get(alert.fingerprint);
      if (record?.acknowledgement && record.startsAt === normaliseTime(alert.startsAt)) view.set(alert.fingerprint, record.acknowledgement);
    }
    return view;
  }

  /**
   * Adds the channel's signed link (for the firing alerts; a storm's many through a stored alert set,
   * `AckLinks.urlForAll`) and the known acknowledgements. Never throws.
   */
  async decorate(notification: Notification, channel: string, view: AckView): Promise<Notification> {
    const alerts = notification.alerts.map((a) => (view.has(a.fingerprint) ? { ...a, acknowledgement: view.get(a.fingerprint)! } : a));
    const firing = alerts.filter((a) => a.status === 'firing').map((a) => a.fingerprint);
    const links = this.deps.links;
    const acknowledgeUrl = links && firing.length ? await links.urlForAll(firing, notification.groupKey, channel, this.deps.now()) : undefined;
    return { ...notification, alerts, ...(acknowledgeUrl && { acknowledgeUrl }) };
  }

  /** Records what was delivered; schedules or cancels escalation. Never throws. */
  async record(message: WebhookMessage, sent: SentAlert[], enrichments: ReadonlyMap<string, Enrichment>): Promise<void> {
    const limit = pLimit(CONCURRENCY);
    const budget = { left: MAX_ESCALATIONS_PER_MESSAGE, skipped: 0 };
    // The group's `notified` events go out in batch writes after the records: one request per 25, not per alert.
    const history: HistoryBatch = { items: [] };
    // Every alert, delivered or not: an undelivered critical one still escalates (the target is the way
    // out of a platform outage), and an undelivered resolve still cancels its escalation.
    await Promise.all(sent.map((s) => limit(async () => {
      try {
        await this.#recordOne(message, s, enrichments.get(s.alert.fingerprint), budget, history);
      } catch (err) {
        this.deps.logger.error('ack state write failed', { fingerprint: s.alert.fingerprint, error: (err as Error).message });
      }
    })));
    await this.deps.store.flushHistory(history).catch((err: Error) => {
      this.deps.logger.error('ack history write failed', { groupKey: message.groupKey, error: err.message });
    });
    if (budget.skipped) this.deps.logger.warn('escalations capped', { groupKey: message.groupKey, scheduled: MAX_ESCALATIONS_PER_MESSAGE, notScheduled: budget.skipped });
  }

  async #recordOne(message: WebhookMessage, s: SentAlert, enrichment: Enrichment | undefined, budget: { left: number; skipped: number }, history: HistoryBatch): Promise<void> {
    const { store, now } = this.deps;
    const notified = { alert: s.alert, enrichment, groupKey: message.groupKey, externalURL: message.externalURL, channels: s.channels, ...(s.generation && { generation: s.generation }) };
    const result = await store.recordNotified(notified, now(), history);
    if (!result) return;
    const { record } = result;
    if (s.alert.status === 'firing') await this.#schedule(record, budget);
    else await this.#cancel(record);
  }

  async #schedule(record: AlertRecord, budget: { left: number; skipped: number }): Promise<void> {
    const escalation = this.deps.escalation;
    if (!escalation || record.escalation || record.acknowledgement || !escalates(record.alert)) return;
    if (budget.left <= 0) {
      budget.skipped += 1;
      return;
    }
    budget.left -= 1;
    const dueAtMs = this.deps.now() + escalation.delaySeconds * 1000;
    const { store, now } = this.deps;
    if (!(await store.scheduleEscalation(record.fingerprint, record.startsAt, dueAtMs, now()))) return;
    try {
      await pRetry(() => escalation.scheduler.schedule({ fingerprint: record.fingerprint, startsAt: record.startsAt }, dueAtMs), { retries: SCHEDULE_RETRIES, minTimeout: 200 });
    } catch (err) {
      // Without a schedule nothing will check: say so in the record and the history, not "scheduled".
      await store.unscheduleEscalation(record.fingerprint, record.startsAt);
      await store.addHistory(record.fingerprint, { type: 'escalation not scheduled', error: (err as Error).message, startsAt: record.startsAt }, now());
      throw err;
    }
    await store.addHistory(record.fingerprint, { type: 'escalation scheduled', dueAt: new Date(dueAtMs).toISOString(), startsAt: record.startsAt }, now());
  }

  async #cancel(record: AlertRecord): Promise<void> {
    if (record.escalation?.state !== 'scheduled') return;
    if (!(await this.deps.store.cancelEscalation(record.fingerprint, record.startsAt, 'resolved', this.deps.now()))) return;
    await this.deps.store.addHistory(record.fingerprint, { type: 'escalation cancelled', reason: 'resolved', startsAt: record.startsAt }, this.deps.now());
    await this.deps.escalation?.scheduler.cancel({ fingerprint: record.fingerprint, startsAt: record.startsAt });
  }
}
