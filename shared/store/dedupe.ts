/**
 * Dedupe semantics: which alert notification events are new, and to which channels each
 * still has to go.
 *
 * An event is one alert in one state: its `fingerprint`, `startsAt` and own `status`, plus a
 * generation when the same firing comes back after it was announced resolved (see
 * `occurrence.ts`, the state machine). Never the request, the receiver or the `groupKey` (which
 * changes with the routing tree). So Alertmanager retries, HA peers sending the same group,
 * reordered alerts and `repeat_interval` resends all map to the same event; firing → resolved is a
 * second, distinct event, and firing again after that resolve a third.
 */
import type { Alert } from '../alertmanager/schema.js';
import { keyPart } from './keys.js';

/**
 * Why an event is (or is not) notified, named like Alertmanager's dedup stage reasons.
 * - `first notification`: never seen; send to every channel.
 * - `firing again`: announced resolved, and sent firing again with the same `startsAt` (a resolve by
 *   a missed resend); confirmed by the source of truth or not contradicted by it; send to every channel.
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
  /** Channels this caller must deliver to (empty unless `first notification`, `firing again` or `repair`). */
  pending: string[];
  event: ClaimedEvent;
}

/** Port for the dedupe ledger. One adapter: DynamoDB (`dedupe-dynamodb.ts`). */
export interface DedupeStore {
  /**
   * Claims an alert event for delivery to `channels`, atomically: of concurrent callers, one wins.
   * @param channels names of the channels configured now
   * @param nowMs current time, epoch milliseconds
   * @param seen what {@link DedupeStore.readMany} read of the alert at `nowMs`, if it did
   * @throws the store's own error when it cannot be reached (the caller answers 5xx)
   */
  claim(alert: AlertEvent, channels: string[], nowMs: number, seen?: Seen): Promise<Claim>;
  /**
   * Reads the records of many alerts in batches (one request per up to 50 alerts), so that
   * {@link DedupeStore.claim} decides from what was read: a duplicate (`already notified`, `in flight`,
   * a candidate) then costs no write, and a new alert only its one conditional write. Optional: a
   * store without it is asked alert by alert.
   * @param options.newRecordsUpTo of a group larger than this, the alert records of alerts with no live
   *   occurrence (new firings) are read only when at most this many (a storm's thousands of new
   *   alerts: half the keys; their flap runs are then not counted, {@link DedupeStore.runOf}); default: always read
   * @returns per alert, in order, what to pass to `claim` (`undefined`: not read, `claim` reads it)
   * @throws the store's own error when it cannot be reached (nothing is claimed yet: answer 5xx)
   */
  readMany?(alerts: AlertEvent[], nowMs: number, options?: { newRecordsUpTo?: number }): Promise<(Seen | undefined)[]>;
  /**
   * Claims in batches the alerts whose {@link DedupeStore.readMany} found no live head (new firings),
   * as atomically as {@link DedupeStore.claim} would one by one. Optional: only a store that can batch
   * them safely has it (the embedded store, the only writer of its table).
   * @returns per entry, in order, its `first notification` claim, or `undefined`: claim it with `claim`
   * @throws the store's own error (answer 5xx; heads already created read as in flight until their lease ends)
   */
  startMany?(entries: { alert: AlertEvent; channels: string[]; seen?: Seen }[], nowMs: number): Promise<(Claim | undefined)[]>;
  /**
   * Whether {@link DedupeStore.readMany} found no live occurrence of this firing: a hint that its claim
   * will most likely be a `first notification`, so that work which only reads (enrichment) can start
   * while the claim is written. Never a decision: only the claim says who sends. Optional: without it
   * nothing starts early.
   */
  unseen?(alert: AlertEvent, seen: Seen, nowMs: number): boolean;
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
  /**
   * The run a firing continues, from what {@link DedupeStore.readMany} read (the alert record): no
   * request; the record's write after delivery stores it (`NotifiedAlert.flapRun`). Use it instead of
   * {@link DedupeStore.noteFiring} only where the pipeline writes alert records.
   * @returns `undefined` when `seen` holds no record read (also a storm's new alert, see `readMany`'s `newRecordsUpTo`)
   */
  runOf?(alert: AlertEvent, seen: Seen, windowMs: number, nowMs: number): FlapRun | undefined;
  /**
   * Whether {@link DedupeStore.readMany} found no alert record of the alert, on a table this process alone
   * writes: then the write count of records when it read (`write-epoch.ts`), which the record's batched write
   * passes on (`NotifiedAlert.recordAbsentAt`) so that it need not read the record again while none was written
   * since. Optional; no request.
   * @returns `undefined` when the record was read and found, not read, or the table is shared
   */
  recordAbsent?(seen: Seen): number | undefined;
  /** Whether {@link DedupeStore.readMany} read the alert's record and found one (live or expired). Optional; no request. */
  recordFound?(seen: Seen): boolean;
}

/** What {@link DedupeStore.readMany} saw of one alert; only the store that read it knows its shape. */
export interface Seen {
  readonly items: readonly unknown[];
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
 * over-long fingerprint is carried as its digest (`keys.ts`). This is generation 0;
 * {@link generationKey} names later ones.
 */
export function eventKey(alert: Pick<Alert, 'fingerprint' | 'startsAt' | 'status'>): string {
  return `event#${keyPart(alert.fingerprint)}#${normalisedStartsAt(alert.startsAt)}#${alert.status}`;
}

/** How many `startsAt` texts {@link normalisedStartsAt} remembers before it starts afresh (a storm's worth; ~1 MB at most). */
const MAX_REMEMBERED_STARTS = 10_000;
/**
 * Longest `startsAt` text remembered: RFC 3339 with nanoseconds and an offset is 35 characters. A longer one
 * still parses (`Date.parse` skips parenthesised text), but remembering it would keep up to a whole body
 * per entry (10,000 of ~1 MB); it is normalised on every call instead.
 */
const MAX_REMEMBERED_LENGTH = 40;
const normalised = new Map<string, string>();

/**
 * `startsAt` in millisecond ISO form (as it is when not a date). A pure function of the text,
 * remembered: a group's store calls name each alert's event key ~15 times, and parsing and
 * formatting the date (~0.8 µs) was ~1.5 % of a duplicate post's CPU (issue #10).
 */
function normalisedStartsAt(startsAt: string): string {
  let iso = normalised.get(startsAt);
  if (iso === undefined) {
    iso = Number.isNaN(Date.parse(startsAt)) ? startsAt : new Date(startsAt).toISOString();
    if (startsAt.length > MAX_REMEMBERED_LENGTH) return iso;
    if (normalised.size >= MAX_REMEMBERED_STARTS) normalised.clear();
    normalised.set(startsAt, iso);
  }
  return iso;
}

/**
 * The key of the event in generation `generation`: {@link eventKey} for 0 (the key deployed tables
 * hold), `…#<generation>` from the first re-fire on.
 */
export function generationKey(alert: Pick<Alert, 'fingerprint' | 'startsAt' | 'status'>, generation: number | undefined): string {
  return generation ? `${eventKey(alert)}#${generation}` : eventKey(alert);
}
