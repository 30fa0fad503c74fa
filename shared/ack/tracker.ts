/**
 * The pipeline's side of acknowledgements, in the order the pipeline calls it: `prepare` (the enrich
 * stage: who acknowledged the alerts about to be sent, and which group announced them) → `decorate` (fan-out,
 * per channel message: the signed Acknowledge link, each alert's acknowledgement, so a resolved message says
 * who acked and how long it took, and the group key each was announced under when Alertmanager regrouped it) → `escalations` (the record stage: escalation scheduled for a new critical occurrence,
 * cancelled on resolve, at most {@link MAX_ESCALATIONS_PER_MESSAGE} new ones per message).
 *
 * It never fails the pipeline: the alert matters more than its bookkeeping, so store errors are logged.
 */
import pRetry from 'p-retry';
import type { Alert } from '../alertmanager/schema.js';
import type { Acknowledgement } from '../enrich/types.js';
import type { Logger } from '../core/logger.js';
import type { Notification } from '../render/notification.js';
import { escalates } from '../escalation/escalates.js';
import type { AckLinks, LinkChannel, StoredSets } from './links.js';
import { normaliseTime } from '../store/keys.js';
import { recordText } from '../store/alert-record-items.js';
import type { EscalationScheduler } from '../escalation/scheduler.js';
import type { AlertRecord, AlertStores } from '../store/alert-record.js';

/**
 * New escalations one webhook message may schedule. A storm is seen by everyone already; one
 * escalation per alert would flood the target and the Scheduler API, and outlast the Lambda time-out.
 */
export const MAX_ESCALATIONS_PER_MESSAGE = 20;
/** Retries of a failed `CreateSchedule` (throttling, a network blip) before the escalation is given up. */
const SCHEDULE_RETRIES = 2;

export interface AckTrackerDeps {
  stores: AlertStores;
  /** Set when `PUBLIC_URL` and `ACK_SECRET` are: messages carry the Acknowledge link. */
  links?: AckLinks;
  /** Set when an escalation target is configured. */
  escalation?: { delaySeconds: number; scheduler: EscalationScheduler };
  logger: Logger;
  /** Epoch milliseconds. */
  now(): number;
}

/**
 * What one group knows of acknowledgements: who acknowledged its alerts, by fingerprint (only those of the
 * same occurrence), and the alert sets its channels' digests stored (they share one).
 */
export interface AckView {
  readonly acknowledgements: ReadonlyMap<string, Acknowledgement>;
  readonly sets: StoredSets;
  /**
   * The group key each resolved alert's occurrence was announced under, by fingerprint, where it is not
   * the group's own (Alertmanager regrouped it since): its follow-ups go to that group's message.
   */
  readonly announcedUnder?: ReadonlyMap<string, string>;
}

/** One group's escalations (`AckTracker.escalations`). */
export interface EscalationRound {
  /** After an alert's record write: escalation scheduled for a firing, cancelled by a resolve. @throws the store's error */
  after(alert: Alert, record: AlertRecord): Promise<void>;
  /** Once every alert is recorded: says how many were left unscheduled by the cap. */
  done(): void;
}

export class AckTracker {
  constructor(readonly deps: AckTrackerDeps) {}

  get stores(): AlertStores {
    return this.deps.stores;
  }

  /**
   * Reads who acknowledged the resolved alerts among `alerts` (firing ones are new: nobody has yet), and
   * the group key each was announced under when it is not `groupKey` (one read of their records for both).
   * @param groupKey the webhook message's `groupKey`
   */
  async prepare(alerts: Alert[], groupKey?: string): Promise<AckView> {
    const acknowledgements = new Map<string, Acknowledgement>();
    const announcedUnder = new Map<string, string>();
    const view = { acknowledgements, sets: new Map(), announcedUnder };
    const resolved = alerts.filter((a) => a.status === 'resolved');
    if (resolved.length === 0) return view;
    const records = await this.deps.stores.records
      .getMany(
        resolved.map((a) => a.fingerprint),
        this.deps.now(),
      )
      .catch((err: Error) => {
        this.deps.logger.warn('ack state read failed', { alerts: resolved.length, error: err.message });
        return new Map<string, AlertRecord>();
      });
    // The record keeps the group key cut to its limit: a long key that was not regrouped reads as its cut self.
    const own = groupKey === undefined ? undefined : recordText(groupKey);
    for (const alert of resolved) {
      const record = records.get(alert.fingerprint);
      if (!record || record.startsAt !== normaliseTime(alert.startsAt)) continue;
      if (record.acknowledgement) acknowledgements.set(alert.fingerprint, record.acknowledgement);
      if (own !== undefined && record.groupKey !== own) announcedUnder.set(alert.fingerprint, record.groupKey);
    }
    return view;
  }

  /**
   * Adds the channel's signed link (for the firing alerts; a storm's many through a stored alert set,
   * `AckLinks.urlForAll`, one set for all the group's channels) and the known acknowledgements. Never throws.
   * @param view what {@link prepare} returned for this group
   */
  async decorate(notification: Notification, channel: LinkChannel, view: AckView): Promise<Notification> {
    const alerts = notification.alerts.map((a) =>
      view.acknowledgements.has(a.fingerprint)
        ? { ...a, acknowledgement: view.acknowledgements.get(a.fingerprint)! }
        : a,
    );
    const firing = alerts.filter((a) => a.status === 'firing');
    const links = this.deps.links;
    const acknowledgeUrl =
      links && firing.length
        ? await links.urlForAll(firing, notification.groupKey, channel, { nowMs: this.deps.now(), stored: view.sets })
        : undefined;
    const threadKeys = Object.fromEntries(
      alerts.flatMap((a) => {
        const key = view.announcedUnder?.get(a.fingerprint);
        return key === undefined ? [] : [[a.fingerprint, key]];
      }),
    );
    return {
      ...notification,
      alerts,
      ...(acknowledgeUrl && { acknowledgeUrl }),
      ...(Object.keys(threadKeys).length && { threadKeys }),
    };
  }

  /** The escalations of one group's message, at most {@link MAX_ESCALATIONS_PER_MESSAGE} new ones. */
  escalations(groupKey: string): EscalationRound {
    const budget = { left: MAX_ESCALATIONS_PER_MESSAGE, skipped: 0 };
    return {
      after: (alert, record) => (alert.status === 'firing' ? this.#schedule(record, budget) : this.#cancel(record)),
      done: () => {
        if (budget.skipped)
          this.deps.logger.warn('escalations capped', {
            groupKey,
            scheduled: MAX_ESCALATIONS_PER_MESSAGE,
            notScheduled: budget.skipped,
          });
      },
    };
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
    const { stores, now } = this.deps;
    if (!(await stores.escalations.schedule(record.fingerprint, record.startsAt, dueAtMs, now()))) return;
    try {
      await pRetry(
        () => escalation.scheduler.schedule({ fingerprint: record.fingerprint, startsAt: record.startsAt }, dueAtMs),
        { retries: SCHEDULE_RETRIES, minTimeout: 200 },
      );
    } catch (err) {
      // Without a schedule nothing will check: say so in the record and the history, not "scheduled".
      await stores.escalations.unschedule(record.fingerprint, record.startsAt);
      await stores.history.add(
        record.fingerprint,
        { type: 'escalation not scheduled', error: (err as Error).message, startsAt: record.startsAt },
        now(),
      );
      throw err;
    }
    await stores.history.add(
      record.fingerprint,
      { type: 'escalation scheduled', dueAt: new Date(dueAtMs).toISOString(), startsAt: record.startsAt },
      now(),
    );
  }

  async #cancel(record: AlertRecord): Promise<void> {
    if (record.escalation?.state !== 'scheduled') return;
    if (!(await this.deps.stores.escalations.cancel(record.fingerprint, record.startsAt, 'resolved', this.deps.now())))
      return;
    await this.deps.stores.history.add(
      record.fingerprint,
      { type: 'escalation cancelled', reason: 'resolved', startsAt: record.startsAt },
      this.deps.now(),
    );
    await this.deps.escalation?.scheduler.cancel({ fingerprint: record.fingerprint, startsAt: record.startsAt });
  }
}
