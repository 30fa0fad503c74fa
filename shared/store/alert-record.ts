/**
 * What the service remembers about an alert beyond dedupe: the current occurrence (an occurrence is
 * one `startsAt` of one fingerprint), who acknowledged it, its silence, its escalation, and an
 * append-only history for the audit route.
 */
import type { Alert } from '../alertmanager/schema.js';
import type { Acknowledgement, Enrichment } from '../enrich/types.js';

export type { Acknowledgement };

/**
 * Why an escalation was cancelled: acknowledged or resolved before it was due, or, when it came due,
 * Alertmanager reported the alert silenced or inhibited.
 */
export type EscalationCancelReason = 'acknowledged' | 'resolved' | 'silenced' | 'inhibited';

/** Escalation of one occurrence: `scheduled` → `sent`, or → `cancelled` by an ack, a resolve, a silence or an inhibition. */
export interface EscalationState {
  state: 'scheduled' | 'sent' | 'cancelled';
  /** When the check runs, RFC 3339. */
  dueAt: string;
  /** When it was sent or cancelled, RFC 3339. */
  at?: string;
  /** Why it was cancelled. */
  reason?: EscalationCancelReason;
}

/** The stored state of one alert (its latest occurrence). */
export interface AlertRecord {
  fingerprint: string;
  /** The occurrence: Alertmanager's `startsAt`, normalised to RFC 3339 with milliseconds. */
  startsAt: string;
  status: 'firing' | 'resolved';
  /** The alert as last notified (labels and annotations exactly as Alertmanager sent them). */
  alert: Alert;
  /** Its enrichment when first notified, so an escalation shows what the first message showed. */
  enrichment?: Enrichment;
  groupKey: string;
  /** Alertmanager's base URL from the webhook (silence links). */
  externalURL: string;
  /** Channels that carried this occurrence (they get the acknowledgement follow-up). */
  channels: string[];
  /** First notification of this occurrence, RFC 3339. */
  notifiedAt: string;
  /** When its resolved notification went out, RFC 3339. */
  resolvedAt?: string;
  acknowledgement?: Acknowledgement;
  escalation?: EscalationState;
  /**
   * The occurrence's generation (`shared/dedupe/occurrence.ts`): ≥ 1 once it fired again after its
   * announced resolve; absent: 0. Follow-ups name the same event as the messages before them (PagerDuty's `dedup_key`).
   */
  generation?: number;
  /** When that generation fired again (RFC 3339, our clock): links issued before it do not acknowledge it. */
  refiredAt?: string;
}

/** One line of an alert's history, as the audit route returns it. `at` is RFC 3339; `startsAt` names the occurrence. */
export type HistoryEvent = { at: string; startsAt: string } & (
  | { type: 'notified'; status: 'firing' | 'resolved'; channels: string[]; generation?: number }
  /** Received, but every channel failed (Alertmanager retries); escalation still follows the alert's state. */
  | { type: 'not delivered'; status: 'firing' | 'resolved'; generation?: number }
  | { type: 'not announced'; status: 'firing' | 'resolved'; decision: 'stale copy'; reason: string }
  | { type: 'acknowledged'; by: string; channel: string }
  | { type: 'silenced'; silenceId: string; endsAt: string; by: string }
  | { type: 'silence failed'; error: string }
  | { type: 'follow-up'; channels: string[]; failed: string[] }
  | { type: 'escalation scheduled'; dueAt: string }
  | { type: 'escalation not scheduled'; error: string }
  | { type: 'escalated'; target: string }
  | { type: 'escalation failed'; target: string; error: string }
  | { type: 'escalation cancelled'; reason: EscalationCancelReason; silencedBy?: string[]; inhibitedBy?: string[] }
);

/** Distributes `Omit` over the history union (plain `Omit` would merge its members). */
export type HistoryInput = HistoryEvent extends infer E ? (E extends HistoryEvent ? Omit<E, 'at'> : never) : never;

/** What {@link AlertRecordStore.acknowledge} did. */
export type AckOutcome =
  | { outcome: 'acknowledged'; record: AlertRecord }
  | { outcome: 'already acknowledged'; record: AlertRecord }
  | { outcome: 'resolved'; record: AlertRecord }
  | { outcome: 'newer occurrence'; record: AlertRecord }
  | { outcome: 'unknown' };

/**
 * History events collected to be written together ({@link AlertRecordStore.flushHistory}): a storm's
 * `notified` events in a few batch requests instead of one request each. Their order is fixed by
 * the sequence numbers the record updates already took, not by when they are written.
 */
export interface HistoryBatch {
  items: Record<string, unknown>[];
}

/** One alert being notified, as the pipeline records it after delivery. */
export interface NotifiedAlert {
  alert: Alert;
  enrichment?: Enrichment;
  groupKey: string;
  externalURL: string;
  /** Channels that accepted it in this round; empty when every channel failed. */
  channels: string[];
  /** The event's generation (`shared/store/occurrence.ts`): ≥ 1 for a re-fire with the same `startsAt` and its resolve. */
  generation?: number;
  /**
   * The event's key (`generationKey`) when every channel its claim named has accepted it: the record's
   * write then also stands for the dedupe ledger's (`shared/store/delivery-mark.ts`). Unset: the
   * ledger is written apart.
   */
  deliveredEvent?: string;
  /** The firing's flap run as the pipeline counted it from the record (`runFromRecord`); stored with a new occurrence. */
  flapRun?: { count: number; sinceMs: number };
  /**
   * The record write count (`write-epoch.ts`) at which the group's read found no record of the alert
   * (`DedupeStore.recordAbsent`, a table this process alone writes): a batched write need not read it again
   * while no record was written since.
   */
  recordAbsentAt?: number;
  /**
   * The group's read found a record of the alert (`DedupeStore.recordFound`): a new occurrence's write then
   * replaces an earlier one, which a transaction of new records cannot do (it would be cancelled).
   */
  recordFound?: true;
}

/**
 * Port for alert state. One adapter: DynamoDB (`alert-record-dynamodb.ts`), in the dedupe table. Not an "ack" store: it holds every alert's state, history, acknowledgement and escalation.
 * Times are epoch milliseconds; every write is a conditional write of one item (a group's new records may go
 * several to a transaction, each with its own condition).
 */
export interface AlertRecordStore {
  /** The alert's record; `undefined` when never notified or expired. */
  get(fingerprint: string, nowMs: number): Promise<AlertRecord | undefined>;
  /** Several records at once (batched reads), by fingerprint; unknown and expired ones are left out. */
  getMany(fingerprints: string[], nowMs: number): Promise<Map<string, AlertRecord>>;
  /**
   * Records a delivered notification. A later `startsAt` starts a new occurrence (acknowledgement
   * and escalation cleared); the same one adds channels and, when resolved, marks it; an older one is ignored.
   * Appends a `notified` history event.
   * @returns the record after the write and whether it began a new occurrence; `undefined` when ignored
   */
  recordNotified(notified: NotifiedAlert, nowMs: number, batch?: HistoryBatch): Promise<{ record: AlertRecord; newOccurrence: boolean } | undefined>;
  /**
   * Records many delivered notifications in a few batched requests, each as {@link recordNotified}
   * would, where the store can do that safely (a table this process alone writes: batched puts; a shared
   * table: the new occurrences' conditional writes in transactions). Optional.
   * @returns per entry, in order: what `recordNotified` returns, or `null` when the entry is left to `recordNotified`
   * @throws the store's error (entries of earlier batches may already be written)
   */
  recordManyNotified?(list: NotifiedAlert[], nowMs: number, batch: HistoryBatch): Promise<({ record: AlertRecord; newOccurrence: boolean } | undefined | null)[]>;
  /**
   * Writes the history events collected in `batch` (a group's `notified` events), many per request.
   * @throws the store's error when some could not be written after retries
   */
  flushHistory(batch: HistoryBatch): Promise<void>;
  /** Adds channels that carried occurrence `startsAt` (an escalation target), without a history event. */
  addChannels(fingerprint: string, startsAt: string, channels: string[], nowMs: number): Promise<void>;
  /**
   * Acknowledges the current occurrence if it started by `latestStartMs`, once: of concurrent callers one wins.
   * @param latestStartMs the latest `startsAt` (epoch ms) the link covers (its issue time plus clock skew,
   *   see `latestCoveredStart`); a later occurrence is not acknowledged by an older link
   */
  acknowledge(fingerprint: string, ack: Acknowledgement, latestStartMs: number, nowMs: number): Promise<AckOutcome>;
  /** Stores the silence id on the acknowledgement of occurrence `startsAt`. */
  setSilence(fingerprint: string, startsAt: string, silenceId: string, nowMs: number): Promise<void>;
  /** Marks escalation `scheduled` for occurrence `startsAt` (only if none yet). */
  scheduleEscalation(fingerprint: string, startsAt: string, dueAtMs: number, nowMs: number): Promise<boolean>;
  /** Removes a `scheduled` escalation whose schedule could not be created, so the record does not claim a check that will never run. */
  unscheduleEscalation(fingerprint: string, startsAt: string): Promise<void>;
  /** `scheduled` → `cancelled`; false when it was not scheduled. */
  cancelEscalation(fingerprint: string, startsAt: string, reason: EscalationCancelReason, nowMs: number): Promise<boolean>;
  /**
   * Claims the escalation of occurrence `startsAt` when it is still firing, unacknowledged and `scheduled`
   * (→ `sent`). Of concurrent callers one wins.
   * @returns the record when claimed
   */
  claimEscalation(fingerprint: string, startsAt: string, nowMs: number): Promise<AlertRecord | undefined>;
  /** `sent` → `scheduled` again after the escalation message failed, so a retry can claim it. */
  releaseEscalation(fingerprint: string, startsAt: string): Promise<void>;
  /**
   * Every escalation still `scheduled`, with its due time (epoch ms), for the in-process scheduler to
   * pick up again at start (`npm start` keeps no timers across a restart). Reads the whole table.
   */
  scheduledEscalations(nowMs: number): Promise<{ fingerprint: string; startsAt: string; dueAtMs: number }[]>;
  /** Appends to the alert's history (no-op when the alert has no record). */
  addHistory(fingerprint: string, event: HistoryInput, nowMs: number): Promise<void>;
  /** The last `limit` history events, oldest first. */
  history(fingerprint: string, limit: number, nowMs: number): Promise<HistoryEvent[]>;
}
