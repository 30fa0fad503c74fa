/**
 * Dedupe semantics: which alert notification events are new, and to which channels each
 * still has to go.
 *
 * An event is one alert in one state: its `fingerprint`, `startsAt` and own `status`, plus a
 * generation when the same firing comes back after it was announced resolved (see
 * `occurrence.ts`, the state machine). Never the request, the receiver or the `groupKey` (which
 * changes with the routing tree). So Alertmanager retries, HA peers sending the same group,
 * reordered alerts and `repeat_interval` resends all map to the same event; firing → resolved is a
 * second, distinct event, and firing again after that resolve a third. Keys: `keys.ts`.
 */
import type { Alert } from '../alertmanager/schema.js';
import type { Seen } from './seen.js';

/**
 * Why an event is (or is not) notified, named like Alertmanager's dedup stage reasons.
 * - `first notification`: never seen; send to every channel.
 * - `firing again`: announced resolved, and sent firing again with the same `startsAt` (a resolve by
 *   a missed resend); confirmed by the source of truth or not contradicted by it; send to every channel.
 * - `silence ended`: acknowledged with a silence that has ended, and sent firing again: the alert still
 *   fires after the silence; a new generation, sent to every channel, unacknowledged.
 * - `repair`: an earlier attempt left channels undelivered and has given up its lease; send to those only.
 * - `already notified`: every channel has it; send nothing.
 * - `in flight`: another delivery (an HA peer, a concurrent retry) holds the lease, or the other
 *   state of the same alert is being delivered; send nothing now, the retry settles it.
 * - `resolved before`: a firing of an alert already announced resolved, the candidate re-fire the
 *   pipeline must confirm (`DedupeStore.confirm`) or drop as a stale copy. Never the end of a claim.
 * - `fired again since`: a resolve, after a re-fire, no newer than the resolve announced before it:
 *   a candidate stale resolve, confirmed or dropped the same way. Never the end of a claim.
 * - `stale copy`: a copy of a state already superseded (a lagging HA peer, a late retry): a firing
 *   the source of truth says is resolved, or a resolve older than the announced one; send nothing.
 */
export type DedupeDecision = (typeof DEDUPE_DECISIONS)[number];

/** Every {@link DedupeDecision}, in the order above. */
export const DEDUPE_DECISIONS = [
  'first notification',
  'firing again',
  'silence ended',
  'repair',
  'already notified',
  'in flight',
  'resolved before',
  'fired again since',
  'stale copy',
] as const;

/** The decisions the source of truth must settle (`shared/pipeline/refire.ts`). */
export const CANDIDATES: ReadonlySet<DedupeDecision> = new Set(['resolved before', 'fired again since']);

/** The decisions an alert ends with once candidates are settled (`dedupe_decisions_total{decision}`). */
export const FINAL_DECISIONS = DEDUPE_DECISIONS.filter((d) => !CANDIDATES.has(d));

/** What the ledger needs of an alert (`endsAt` tells a stale resolve from a new one). */
export type AlertEvent = Pick<Alert, 'fingerprint' | 'startsAt' | 'status' | 'endsAt'>;

/** The event a claim is about: pass it back to {@link DedupeStore.markDelivered} and {@link DedupeStore.release}. */
export interface ClaimedEvent {
  /** Its identity, {@link generationKey} (logs, SNS FIFO deduplication ids). */
  key: string;
  status: Alert['status'];
  /** 0 until the alert fires again after an announced resolve; each re-fire adds 1. */
  generation: number;
}

export interface Claim {
  decision: DedupeDecision;
  /** Channels this caller must deliver to (empty unless `first notification`, `firing again`, `silence ended` or `repair`). */
  pending: string[];
  event: ClaimedEvent;
}

/**
 * Port for the dedupe ledger. One adapter: DynamoDB (`dedupe-dynamodb.ts`), single-item conditional
 * writes, the same in Lambda and under `npm start`.
 */
export interface DedupeStore {
  /**
   * Reads the records of many alerts in batches (one request per up to 50 alerts), so that
   * {@link DedupeStore.claim} decides from what was read: a duplicate (`already notified`, `in flight`,
   * a candidate) then costs no write, and a new alert only its one conditional write.
   * @param options.newRecordsUpTo of a group larger than this, the alert records of alerts with no live
   *   occurrence (new firings) are read only when at most this many (a storm's thousands of new alerts:
   *   half the keys; their flap runs are then not counted); default: always read
   * @returns per alert, in order, what to pass to `claim` (`undefined`: not read, or not readable; `claim` reads it)
   * @throws the store's own error when it cannot be reached (nothing is claimed yet: answer 5xx)
   */
  readMany(alerts: AlertEvent[], nowMs: number, options?: { newRecordsUpTo?: number }): Promise<(Seen | undefined)[]>;
  /**
   * Claims an alert event for delivery to `channels`, atomically: of concurrent callers, one wins.
   * @param channels names of the channels configured now
   * @param nowMs current time, epoch milliseconds
   * @param seen what {@link DedupeStore.readMany} read of the alert at `nowMs`, if it did
   * @throws the store's own error when it cannot be reached (the caller answers 5xx); `StoredItemError`
   *   when the alert's stored head does not match its layout
   */
  claim(alert: AlertEvent, channels: string[], nowMs: number, seen?: Seen): Promise<Claim>;
  /**
   * Claims a confirmed candidate: a re-fire (`resolved before`) moves the alert from the resolve that
   * `candidate` saw to firing, one generation on (`firing again`); a resolve (`fired again since`)
   * moves that generation's firing to resolved (`first notification`). Of concurrent callers one wins;
   * the others get what the alert holds now (`in flight`, `already notified`).
   * @throws the store's own error when it cannot be reached
   */
  confirm(alert: AlertEvent, candidate: Claim, channels: string[], nowMs: number): Promise<Claim>;
  /**
   * Records that `channel` (or each of several channels, in one write) accepted the event. Idempotent;
   * a no-op once the alert has moved on to a later event.
   */
  markDelivered(alert: AlertEvent, event: ClaimedEvent, channel: string | string[]): Promise<void>;
  /** Gives up the lease early so that a retry can repair the undelivered channels at once. */
  release(alert: AlertEvent, event: ClaimedEvent): Promise<void>;
}
