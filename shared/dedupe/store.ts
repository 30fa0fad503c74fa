/**
 * Dedupe semantics: which alert notification events are new, and to which channels each
 * still has to go.
 *
 * An event is one alert in one state: its `fingerprint`, `startsAt` and own `status`. Never the
 * request, the receiver or the `groupKey` (which changes with the routing tree). So Alertmanager
 * retries, HA peers sending the same group, reordered alerts and `repeat_interval` resends all
 * map to the same key; firing → resolved is a second, distinct event.
 */
import type { Alert } from '../alertmanager/schema.js';
import { keyPart } from './keys.js';

/**
 * Why an event is (or is not) notified, named like Alertmanager's dedup stage reasons.
 * - `first notification`: never seen; send to every channel.
 * - `repair`: an earlier attempt left channels undelivered and has given up its lease; send to those only.
 * - `already notified`: every channel has it; send nothing.
 * - `in flight`: another delivery (an HA peer, a concurrent retry) holds the lease; send nothing now,
 *   the holder reports failure to its Alertmanager, whose retry repairs it.
 */
export type DedupeDecision = 'first notification' | 'repair' | 'already notified' | 'in flight';

export interface Claim {
  decision: DedupeDecision;
  /** Channels this caller must deliver to (empty unless `first notification` or `repair`). */
  pending: string[];
}

/** Port for the dedupe ledger. One adapter: DynamoDB (`dynamodb-store.ts`). */
export interface DedupeStore {
  /**
   * Claims an event for delivery to `channels`, atomically: of concurrent callers, one wins.
   * @param key from {@link eventKey}
   * @param channels names of the channels configured now
   * @param nowMs current time, epoch milliseconds
   * @throws the store's own error when it cannot be reached (the caller answers 5xx)
   */
  claim(key: string, channels: string[], nowMs: number): Promise<Claim>;
  /** Records that `channel` (or each of several channels, in one write) accepted the event. Idempotent. */
  markDelivered(key: string, channel: string | string[]): Promise<void>;
  /** Gives up the lease early so that a retry can repair the undelivered channels at once. */
  release(key: string): Promise<void>;
  /**
   * Records that an alert fired (once per firing: the same `startsAtMs` again returns the stored
   * run) and says how it flaps: `count` firings since `sinceMs`, each within `windowMs` of the
   * previous one's start. `count` 1 means it is not flapping. Optional: a store without it never
   * marks alerts as flapping.
   * @param fingerprint the alert's `fingerprint`
   * @param startsAtMs the firing's `startsAt`, epoch milliseconds
   * @param windowMs the flap window, milliseconds
   * @param nowMs current time, epoch milliseconds
   * @throws the store's own error when it cannot be reached (the caller marks nothing)
   */
  noteFiring?(fingerprint: string, startsAtMs: number, windowMs: number, nowMs: number): Promise<FlapRun>;
}

/** A run of firings of one alert, each within the flap window of the previous. */
export interface FlapRun {
  /** Firings in the run, including this one (1: not flapping). */
  count: number;
  /** `startsAt` of the run's first firing, epoch milliseconds. */
  sinceMs: number;
}

/**
 * The dedupe key of an alert notification event: `event#<fingerprint>#<startsAt>#<status>`.
 * `startsAt` is normalised to millisecond ISO form, so `…23.143Z` and `…23.143000000Z` match; an
 * over-long fingerprint is carried as its digest (`keys.ts`).
 */
export function eventKey(alert: Pick<Alert, 'fingerprint' | 'startsAt' | 'status'>): string {
  const startsAt = Number.isNaN(Date.parse(alert.startsAt)) ? alert.startsAt : new Date(alert.startsAt).toISOString();
  return `event#${keyPart(alert.fingerprint)}#${startsAt}#${alert.status}`;
}
