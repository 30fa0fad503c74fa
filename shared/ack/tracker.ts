/**
 * The pipeline's side of acknowledgements, in the order the pipeline calls it:
 * `prepare` (read who acknowledged the alerts about to be sent) → `decorate` (per channel message:
 * the signed Acknowledge link, and each alert's acknowledgement, so a resolved message says who acked
 * and how long it took) → `session` (the record stage: as soon as every channel accepted an alert,
 * its record with the delivery mark; after delivery, delivered or not, the others' records and
 * history, escalation scheduled for a new critical occurrence, cancelled on resolve).
 *
 * It never fails the pipeline: the alert matters more than its bookkeeping, so store errors are logged.
 */
import pLimit from 'p-limit';
import pRetry from 'p-retry';
import type { Alert, WebhookMessage } from '../alertmanager/schema.js';
import type { Acknowledgement, Enrichment } from '../enrich/types.js';
import type { Logger } from '../core/logger.js';
import type { Notification } from '../render/notification.js';
import { escalates } from '../escalation/escalates.js';
import type { AckLinks, StoredSets } from './links.js';
import { normaliseTime } from '../store/alert-record-items.js';
import type { EscalationScheduler } from '../escalation/scheduler.js';
import type { FlapRun } from '../store/dedupe.js';
import type { AlertRecordStore, AlertRecord, HistoryBatch, NotifiedAlert } from '../store/alert-record.js';

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
  /** The firing's flap run counted from its record (`runFromRecord`), stored with the record. */
  flapRun?: FlapRun;
  /** See `NotifiedAlert.recordAbsentAt`. */
  recordAbsentAt?: number;
  /** See `NotifiedAlert.recordFound`. */
  recordFound?: boolean;
}

export class AckTracker {
  /** Each group's stored alert sets, by the group's view (one per `prepare`): its channels' digests share one set. */
  readonly #sets = new WeakMap<AckView, StoredSets>();

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
   * `AckLinks.urlForAll`, one set for all the group's channels) and the known acknowledgements. Never throws.
   * @param view what {@link prepare} returned for this group
   */
  async decorate(notification: Notification, channel: string, view: AckView): Promise<Notification> {
    const alerts = notification.alerts.map((a) => (view.has(a.fingerprint) ? { ...a, acknowledgement: view.get(a.fingerprint)! } : a));
    const firing = alerts.filter((a) => a.status === 'firing').map((a) => a.fingerprint);
    const links = this.deps.links;
    const sets = this.#sets.get(view) ?? new Map();
    this.#sets.set(view, sets);
    const acknowledgeUrl = links && firing.length ? await links.urlForAll(firing, notification.groupKey, channel, this.deps.now(), sets) : undefined;
    return { ...notification, alerts, ...(acknowledgeUrl && { acknowledgeUrl }) };
  }

  /**
   * The record stage of one group, in two steps: {@link AckSession.delivered} while fan-out runs (an
   * alert every claimed channel accepted: its record write also carries the delivery mark, so it is
   * the alert's only write after delivery), then {@link AckSession.finish} (the other alerts'
   * records, escalation, the history batch).
   */
  session(message: WebhookMessage, enrichments: ReadonlyMap<string, Enrichment>): AckSession {
    return new AckSession(this, message, enrichments);
  }

  /** @internal One alert's record write (see {@link AlertRecordStore.recordNotified}); `undefined`: ignored (an older occurrence). */
  write(message: WebhookMessage, s: SentAlert, enrichment: Enrichment | undefined, history: HistoryBatch, deliveredEvent?: string): ReturnType<AlertRecordStore['recordNotified']> {
    return this.deps.store.recordNotified(notifiedOf(message, s, enrichment, deliveredEvent), this.deps.now(), history);
  }

  /** @internal Escalation after an alert's record write: scheduled for a firing, cancelled by a resolve. */
  async escalate(alert: Alert, record: AlertRecord, budget: { left: number; skipped: number }): Promise<void> {
    if (alert.status === 'firing') await this.#schedule(record, budget);
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

type Written = Awaited<ReturnType<AlertRecordStore['recordNotified']>>;

/** What the store records of one alert after fan-out; `deliveredEvent`: the delivery mark. */
function notifiedOf(message: WebhookMessage, s: SentAlert, enrichment: Enrichment | undefined, deliveredEvent?: string): NotifiedAlert {
  return { alert: s.alert, enrichment, groupKey: message.groupKey, externalURL: message.externalURL, channels: s.channels, ...(s.generation && { generation: s.generation }), ...(deliveredEvent && { deliveredEvent }), ...(s.flapRun && { flapRun: s.flapRun }), ...(s.recordAbsentAt !== undefined && { recordAbsentAt: s.recordAbsentAt }), ...(s.recordFound && { recordFound: true as const }) };
}

/** A record write waiting for the next batch (`AckSession.delivered`). */
interface Queued {
  notified: NotifiedAlert;
  done: (written: Promise<Written>) => void;
}

/** See {@link AckTracker.session}. */
export class AckSession {
  /** The group's `notified` events, written in batch requests at the end: one request per 25, not per alert. */
  readonly #history: HistoryBatch = { items: [] };
  /** Records written with their delivery mark, by event key. */
  readonly #written = new Map<string, Written>();
  /** Record writes queued in this turn of the event loop, written together where the store batches them. */
  #queued: Queued[] = [];
  /** The single record writes a batch leaves alone, {@link CONCURRENCY} at a time. */
  readonly #single = pLimit(CONCURRENCY);

  /** Whether {@link delivered} batches its writes (`AlertRecordStore.recordManyNotified`): many may then be in flight at once. */
  get batches(): boolean {
    return this.tracker.store.recordManyNotified !== undefined;
  }

  constructor(
    private readonly tracker: AckTracker,
    private readonly message: WebhookMessage,
    private readonly enrichments: ReadonlyMap<string, Enrichment>,
  ) {}

  /**
   * Writes the record of an alert that every channel of its claim accepted, with the delivery mark
   * `eventKey` (the dedupe ledger reads it as delivered). Once per event: the record's history event
   * lists `channels`.
   * @returns whether the mark stands: written, or the record holds a later occurrence (this one is
   *   over); false for a late firing of a record already resolved (the caller then writes the ledger apart)
   * @throws the store's error (the caller then writes the ledger apart)
   */
  async delivered(s: SentAlert, eventKey: string): Promise<boolean> {
    const notified = notifiedOf(this.message, s, this.enrichments.get(s.alert.fingerprint), eventKey);
    const written = await (this.tracker.store.recordManyNotified ? this.#batched(notified) : this.tracker.store.recordNotified(notified, this.tracker.deps.now(), this.#history));
    this.#written.set(eventKey, written);
    return written === undefined || s.alert.status === 'resolved' || written.record.status === 'firing';
  }

  /**
   * Queues a record write; the writes queued in one turn of the event loop (a storm's alerts, which
   * every channel accepted at once) go out together (`AlertRecordStore.recordManyNotified`), those it
   * leaves alone one by one.
   */
  #batched(notified: NotifiedAlert): Promise<Written> {
    return new Promise<Promise<Written>>((done) => {
      this.#queued.push({ notified, done });
      if (this.#queued.length === 1) setImmediate(() => this.#flush());
    }).then((written) => written);
  }

  #flush(): void {
    const queued = this.#queued;
    this.#queued = [];
    const { store, now } = this.tracker.deps;
    const batch = store.recordManyNotified!(queued.map((q) => q.notified), now(), this.#history);
    // What the batch left alone is one request each: at most CONCURRENCY at once (a storm's resolves are thousands).
    queued.forEach((q, i) => q.done(batch.then((results) => (results[i] === null ? this.#single(() => store.recordNotified(q.notified, now(), this.#history)) : results[i]))));
  }

  /**
   * Writes the records not written by {@link delivered} (every alert, delivered or not: an undelivered
   * critical one still escalates — the target is the way out of a platform outage — and an undelivered
   * resolve still cancels its escalation), schedules or cancels escalation, writes the history. Never throws.
   * @param sent every alert of the group that was to be sent, with its event key and the channels that accepted it
   */
  async finish(sent: (SentAlert & { eventKey?: string })[]): Promise<void> {
    const { logger } = this.tracker.deps;
    const limit = pLimit(CONCURRENCY);
    const budget = { left: MAX_ESCALATIONS_PER_MESSAGE, skipped: 0 };
    await Promise.all(sent.map((s) => limit(async () => {
      try {
        const done = s.eventKey !== undefined && this.#written.has(s.eventKey);
        const result = done ? this.#written.get(s.eventKey!) : await this.tracker.write(this.message, s, this.enrichments.get(s.alert.fingerprint), this.#history);
        if (result) await this.tracker.escalate(s.alert, result.record, budget);
      } catch (err) {
        logger.error('ack state write failed', { fingerprint: s.alert.fingerprint, error: (err as Error).message });
      }
    })));
    await this.tracker.store.flushHistory(this.#history).catch((err: Error) => {
      logger.error('ack history write failed', { groupKey: this.message.groupKey, error: err.message });
    });
    if (budget.skipped) logger.warn('escalations capped', { groupKey: this.message.groupKey, scheduled: MAX_ESCALATIONS_PER_MESSAGE, notScheduled: budget.skipped });
  }
}
