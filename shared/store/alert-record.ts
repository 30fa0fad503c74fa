/**
 * What the service remembers about an alert beyond dedupe: the current occurrence (an occurrence is
 * one `startsAt` of one fingerprint), who acknowledged it, its silence, its escalation, and an
 * append-only history for the audit route. Four stores over one item, the alert record
 * (`alert-record-items.ts`), each a port with one DynamoDB adapter:
 * - {@link AlertRecordStore}: the record the pipeline writes after delivery, and reads;
 * - {@link HistoryStore}: the append-only history;
 * - {@link AcknowledgementStore}: who acknowledged the occurrence, and its silence;
 * - {@link EscalationStore}: the occurrence's escalation, `scheduled` → `sent` or `cancelled`.
 * Every write is a single-item conditional write; times are epoch milliseconds unless named otherwise.
 */
import type { Alert } from '../alertmanager/schema.js';
import type { Acknowledgement, Enrichment } from '../enrich/types.js';

export type { Acknowledgement };

/**
 * Why an escalation was cancelled: acknowledged or resolved before it was due, or, when it came due,
 * a source of truth said it was over (`resolved`, with the event's `source`) or Alertmanager reported
 * the alert silenced or inhibited.
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
   * The occurrence's generation (`shared/store/occurrence.ts`): ≥ 1 once it fired again after its
   * announced resolve; absent: 0. Follow-ups name the same event as the messages before them (PagerDuty's `dedup_key`).
   */
  generation?: number;
  /** When that generation fired again (RFC 3339, our clock): links issued before it do not acknowledge it. */
  refiredAt?: string;
}

/** What an acknowledgement link covers, epoch milliseconds: see {@link AcknowledgementStore.acknowledge}. */
export interface LinkCover {
  /** The latest `startsAt` covered (the sender's clock). */
  startsAtMs: number;
  /** The latest first notification (`notifiedAt`) and re-fire (`refiredAt`) covered, our clock. */
  refiredAtMs: number;
}

/** One line of an alert's history, as the audit route returns it. `at` is RFC 3339; `startsAt` names the occurrence. */
export type HistoryEvent = { at: string; startsAt: string } /**
 * `mayHaveBeenDelivered` (both): channels that failed after an attempt timed out with the whole message
 * sent; it may have reached them (a slow platform), and Alertmanager's retry may then show it twice.
 */ & (
  | {
      type: 'notified';
      status: 'firing' | 'resolved';
      channels: string[];
      generation?: number;
      mayHaveBeenDelivered?: string[];
    }
  /** Received, but every channel failed (Alertmanager retries); escalation still follows the alert's state. */
  | { type: 'not delivered'; status: 'firing' | 'resolved'; generation?: number; mayHaveBeenDelivered?: string[] }
  | { type: 'not announced'; status: 'firing' | 'resolved'; decision: 'stale copy'; reason: string }
  | { type: 'acknowledged'; by: string; channel: string }
  | { type: 'silenced'; silenceId: string; endsAt: string; by: string }
  | { type: 'silence failed'; error: string }
  /**
   * `retrying`: channels whose follow-up failed for a reason that passes (a 429) and is kept and tried again
   * (a later `follow-up` event says how it ended); `attempts`: tries it took, on an event written by a retry.
   */
  | { type: 'follow-up'; channels: string[]; failed: string[]; retrying?: string[]; attempts?: number }
  | { type: 'escalation scheduled'; dueAt: string }
  | { type: 'escalation not scheduled'; error: string }
  /**
   * `verdict`: what the sources of truth said when it came due (`firing`, or `unknown` with
   * `verdictReason`: none configured, none answered); absent in events written before they were asked.
   */
  | {
      type: 'escalated';
      target: string;
      verdict?: 'firing' | 'unknown';
      source?: 'prometheus' | 'alertmanager' | 'none';
      verdictReason?: string;
    }
  | { type: 'escalation failed'; target: string; error: string }
  /** `source`: who said it was over when it came due (reason `resolved` before our resolve arrived). */
  | {
      type: 'escalation cancelled';
      reason: EscalationCancelReason;
      silencedBy?: string[];
      inhibitedBy?: string[];
      source?: 'prometheus' | 'alertmanager';
    }
);

/** Distributes `Omit` over the history union (plain `Omit` would merge its members). */
export type HistoryInput = HistoryEvent extends infer E ? (E extends HistoryEvent ? Omit<E, 'at'> : never) : never;

/** What {@link AcknowledgementStore.acknowledge} did. */
export type AckOutcome =
  | { outcome: 'acknowledged'; record: AlertRecord }
  | { outcome: 'already acknowledged'; record: AlertRecord }
  | { outcome: 'resolved'; record: AlertRecord }
  | { outcome: 'newer occurrence'; record: AlertRecord }
  | { outcome: 'unknown' };

/**
 * History events collected to be written together ({@link HistoryStore.flush}): a group's `notified`
 * events in a few batch requests instead of one request each. Their order is fixed by the sequence
 * numbers the record updates already took, not by when they are written.
 */
export interface HistoryBatch {
  items: { pk: string; eventJson: string; expiresAt: number }[];
}

/** One alert being notified, as the pipeline records it after delivery. */
export interface NotifiedAlert {
  alert: Alert;
  enrichment?: Enrichment;
  groupKey: string;
  externalURL: string;
  /** Channels that accepted it in this round; empty when every channel failed. */
  channels: string[];
  /** Channels whose attempt timed out after they had the whole message: it may have been delivered there. */
  mayHaveBeenDelivered?: string[];
  /** The event's generation (`shared/store/occurrence.ts`): ≥ 1 for a re-fire with the same `startsAt` and its resolve. */
  generation?: number;
  /**
   * The event's key (`generationKey`) when every channel its claim named has accepted it: the record's
   * write then also stands for the dedupe ledger's (`shared/store/delivery-mark.ts`). Unset: the
   * ledger is written apart.
   */
  deliveredEvent?: string;
  /** The firing's flap run as the pipeline counted it from the record (`runOf`); stored with a new occurrence. */
  flapRun?: { count: number; sinceMs: number };
}

/** What {@link AlertRecordStore.recordNotified} wrote. */
export interface RecordWrite {
  record: AlertRecord;
  /** Whether the write began a new occurrence (acknowledgement and escalation cleared). */
  newOccurrence: boolean;
}

/** The alert records: what the pipeline writes after delivery, and what the others read. */
export interface AlertRecordStore {
  /** The alert's record; `undefined` when never notified or expired. @throws the store's error */
  get(fingerprint: string, nowMs: number): Promise<AlertRecord | undefined>;
  /** Several records at once (batched reads), by fingerprint; unknown and expired ones are left out. */
  getMany(fingerprints: string[], nowMs: number): Promise<Map<string, AlertRecord>>;
  /**
   * Records a delivered notification. A later `startsAt` starts a new occurrence (acknowledgement
   * and escalation cleared); the same one adds channels and, when resolved, marks it; an older one is ignored.
   * Appends a `notified` history event (into `batch` when given, for {@link HistoryStore.flush}).
   * @returns the record after the write; `undefined` when ignored
   * @throws the store's error
   */
  recordNotified(notified: NotifiedAlert, nowMs: number, batch?: HistoryBatch): Promise<RecordWrite | undefined>;
  /** Adds channels that carried occurrence `startsAt` (an escalation target), without a history event. */
  addChannels(fingerprint: string, startsAt: string, channels: string[], nowMs: number): Promise<void>;
}

/** An alert's append-only history, for the audit route. */
export interface HistoryStore {
  /** Appends to the alert's history (no-op when the alert has no record). @throws the store's error */
  add(fingerprint: string, event: HistoryInput, nowMs: number): Promise<void>;
  /**
   * Writes the history events collected in `batch`, many per request.
   * @throws the store's error when some could not be written after retries
   */
  flush(batch: HistoryBatch): Promise<void>;
  /** The last `limit` history events, oldest first. */
  last(fingerprint: string, limit: number, nowMs: number): Promise<HistoryEvent[]>;
}

/** Who acknowledged an alert's current occurrence, and the silence made with it. */
export interface AcknowledgementStore {
  /**
   * Acknowledges the current occurrence if the link covers it, once: of concurrent callers one wins.
   * @param covers what the link covers (`linkCover` in `shared/ack/links.ts`): the latest `startsAt` (epoch ms,
   *   the sender's clock) and the latest re-fire (`refiredAt`, epoch ms, our clock); a later occurrence or
   *   re-fire is not acknowledged by an older link
   */
  acknowledge(fingerprint: string, ack: Acknowledgement, covers: LinkCover, nowMs: number): Promise<AckOutcome>;
  /**
   * Stores the silence on the acknowledgement of occurrence `startsAt`: its id, and when it ends (RFC 3339),
   * after which a firing sent again is announced again.
   */
  setSilence(
    fingerprint: string,
    startsAt: string,
    silence: { id: string; endsAt: string },
    nowMs: number,
  ): Promise<void>;
}

/** An occurrence's escalation: `scheduled` → `sent`, or `cancelled`. */
export interface EscalationStore {
  /** Marks escalation `scheduled` for occurrence `startsAt` (only if none yet). @returns whether it did */
  schedule(fingerprint: string, startsAt: string, dueAtMs: number, nowMs: number): Promise<boolean>;
  /** Removes a `scheduled` escalation whose schedule could not be created, so the record does not claim a check that will never run. */
  unschedule(fingerprint: string, startsAt: string): Promise<void>;
  /** `scheduled` → `cancelled`; false when it was not scheduled. */
  cancel(fingerprint: string, startsAt: string, reason: EscalationCancelReason, nowMs: number): Promise<boolean>;
  /**
   * Claims the escalation of occurrence `startsAt` when it is still firing, unacknowledged and `scheduled`
   * (→ `sent`). Of concurrent callers one wins.
   * @returns the record when claimed
   */
  claim(fingerprint: string, startsAt: string, nowMs: number): Promise<AlertRecord | undefined>;
  /** `sent` → `scheduled` again after the escalation message failed, so a retry can claim it. */
  release(fingerprint: string, startsAt: string): Promise<void>;
  /**
   * Every escalation still `scheduled`, with its due time (epoch ms), for the in-process scheduler to
   * pick up again at start (`npm start` keeps no timers across a restart). Reads the whole table.
   */
  scheduled(nowMs: number): Promise<{ fingerprint: string; startsAt: string; dueAtMs: number }[]>;
}

/** The four stores of the alert record, as wired once per process (`alertStores`). */
export interface AlertStores {
  records: AlertRecordStore;
  history: HistoryStore;
  acknowledgements: AcknowledgementStore;
  escalations: EscalationStore;
}
