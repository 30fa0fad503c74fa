/**
 * The alert-event state machine: the one place that says which state of an alert occurrence (one
 * `fingerprint` with one `startsAt`) is announced, in which order, under HA peers and retries.
 *
 * The occurrence has one record (its *head*, see `dedupe-dynamodb.ts`): the state last claimed for
 * announcement, its generation, and that state's delivery ledger (channels pending and delivered,
 * a lease). Every transition is one conditional write on the head, so of concurrent deliverers
 * exactly one moves it.
 *
 * ```
 *               F / first notification                 R / first notification
 *   (none) ─────────────────────────────▶ FIRING(g) ──────────────────────────▶ RESOLVED(g)
 *     │                                    ▲   │                                    │  │
 *     │ R / first notification            │   └─ F: ledger (already notified,      │  └─ R: ledger
 *     └────────────────────────────────────┼──── repair, in flight)                 │
 *                                          │   R while FIRING(g) is in flight: in flight (wait)
 *          F confirmed / firing again      │   R not after RESOLVED(g-1)'s endsAt: fired again since
 *          (generation g+1)                └────────────────────────────────────────┤
 *                                              F not confirmed: stale copy ◀────────┘
 * ```
 *
 * Transitions, with F a firing post and R a resolved post of the occurrence:
 * - no head, F → FIRING(0), `first notification`; no head, R → RESOLVED(0), `first notification`.
 * - FIRING(g), F → the head's ledger: `already notified` (every channel has it; `repeat_interval`
 *   resends, HA duplicates), `repair` (channels left undelivered, lease free), `in flight` (lease held).
 * - FIRING(g), R → RESOLVED(g), `first notification`: channels that missed the firing get only the resolve.
 *   Unless the firing is still being delivered (lease held, channels pending): `in flight`, so a
 *   channel never gets RESOLVED before the FIRING it ends. Unless, for g ≥ 1, its `endsAt` is not
 *   after the `endsAt` of the resolve announced before the re-fire: `fired again since`, a candidate
 *   stale resolve (a lagging copy of that resolve, or the resolve of a lagging peer whose firing
 *   copy was confirmed while the alert still fired). Alertmanager's resolve after a real re-fire
 *   carries a later `endsAt` and needs no question. The pipeline asks the source of truth:
 *   - it says resolved → RESOLVED(g), `first notification`;
 *   - it fires, or nobody can say → nothing changes, `stale copy`: a stale FIRING is the lesser error.
 * - FIRING(g), F, every channel has it, and the acknowledgement of FIRING(g) came with a silence that
 *   has ended (`silence-end.ts`; {@link SILENCE_END_SKEW_MS} early, for the sender's clock) →
 *   FIRING(g+1), `silence ended`, to every channel: Alertmanager sends nothing for a silenced alert, so
 *   this is the alert still firing after the silence, and the acknowledgement is over with it (a
 *   critical alert escalates again). An acknowledgement without a silence holds until the resolve.
 * - RESOLVED(g), R → the head's ledger, as for F above.
 * - RESOLVED(g), F → `resolved before`: the same bytes as the first firing, so the payload cannot
 *   tell a re-fire (Alertmanager resolved the alert when its `endsAt` passed without a resend, and
 *   Prometheus sent it again) from a stale copy (a lagging HA peer, a late retry). The pipeline asks
 *   the source of truth (Prometheus's `ALERTS`, Alertmanager's alerts; `shared/alert-state/`):
 *   - it fires, or nobody can say (no source configured, unreachable, alert unknown to it) →
 *     FIRING(g+1), `firing again`, to every channel. Missing a real re-fire (silence during an
 *     incident) is worse than a stale FIRING, which Alertmanager's next resolve corrects.
 *   - it says resolved → nothing changes, `stale copy` (recorded in the alert's history).
 *   Not while RESOLVED(g) is being delivered: `in flight`, as above.
 * Both questions are settled by `DedupeStore.confirm`, one conditional write.
 *
 * Limits: without a source of truth a stale firing copy is announced as `firing again`; the
 * channels then say FIRING until Alertmanager resolves the alert again (an HA peer that lagged
 * resolves it too; a retry after the resolve was sent is not followed by another resolve). A resolve
 * is checked against the source only after a re-fire and when its `endsAt` is not newer (the common
 * path stays free of queries); any other stale resolve is announced, and corrected by the next
 * `repeat_interval` resend of the firing, confirmed as `firing again`. The source answers for the
 * moment it is asked: a firing confirmed just before a real resolve is followed by that resolve.
 * A silence expired early in Alertmanager is not seen: a firing sent then is `already notified` until
 * the end the silence was created with.
 */
import { SENDER_CLOCK_SKEW_MS } from '../alertmanager/schema.js';

/**
 * How long before its end a silence counts as ended, milliseconds: the sender's clock may be ahead of
 * ours (the end was set by ours), and during the silence it sends nothing for the alert anyway.
 */
export const SILENCE_END_SKEW_MS = SENDER_CLOCK_SKEW_MS;

/** An occurrence's state, as last claimed for announcement. */
export type OccurrenceState = 'firing' | 'resolved';

/** What the head says, as read. */
export interface Head {
  state: OccurrenceState;
  generation: number;
  /** Channels the state still has to reach. */
  pending: string[];
  /** Epoch milliseconds; the current deliverer's lease. */
  leaseUntil: number;
  /** `endsAt` of the resolve announced last, epoch milliseconds, when known. */
  resolvedEndsAtMs?: number;
  /** When the silence that came with this generation's acknowledgement ends, epoch milliseconds (`silence-end.ts`). */
  silenceEndsAtMs?: number;
}

/** An incoming post of the occurrence. */
export interface Incoming {
  status: OccurrenceState;
  /** Its `endsAt`, epoch milliseconds; `undefined` when zero (firing) or unparsable. */
  endsAtMs?: number;
}

/**
 * The next step for an incoming post:
 * - `start`: no head yet; create it in the post's state, generation 0;
 * - `ledger`: the head is in the post's state; dedupe on its ledger ({@link ledgerDecision});
 * - `resolve`: FIRING(g) → RESOLVED(g);
 * - `confirm`: a candidate re-fire; ask the source of truth, then RESOLVED(g) → FIRING(g+1);
 * - `confirm resolve`: a candidate stale resolve; ask the source of truth, then FIRING(g) → RESOLVED(g);
 * - `wait`: the other state is being delivered (`in flight`);
 * - `renew`: FIRING(g) → FIRING(g+1), the acknowledgement's silence has ended.
 */
export type Step = 'start' | 'ledger' | 'resolve' | 'confirm' | 'confirm resolve' | 'wait' | 'renew';

/** @param nowMs epoch milliseconds */
export function nextStep(head: Head | undefined, post: Incoming, nowMs: number): Step {
  if (!head) return 'start';
  if (head.state === post.status) return post.status === 'firing' && silenceEnded(head, nowMs) ? 'renew' : 'ledger';
  if (inFlight(head, nowMs)) return 'wait';
  if (post.status === 'firing') return 'confirm';
  if (head.generation > 0 && isStaleResolve(head, post)) return 'confirm resolve';
  return 'resolve';
}

/** Whether the head's firing was delivered everywhere and its acknowledgement's silence has ended. */
export function silenceEnded(head: Pick<Head, 'pending' | 'silenceEndsAtMs'>, nowMs: number): boolean {
  return (
    head.pending.length === 0 &&
    head.silenceEndsAtMs !== undefined &&
    nowMs >= head.silenceEndsAtMs - SILENCE_END_SKEW_MS
  );
}

/** Whether a resolve is no newer than the one announced before the re-fire. */
export function isStaleResolve(head: Pick<Head, 'resolvedEndsAtMs'>, post: Incoming): boolean {
  return head.resolvedEndsAtMs !== undefined && post.endsAtMs !== undefined && post.endsAtMs <= head.resolvedEndsAtMs;
}

/** Whether the head's state is being delivered right now: channels pending under a live lease. */
export function inFlight(head: Pick<Head, 'pending' | 'leaseUntil'>, nowMs: number): boolean {
  return head.pending.length > 0 && head.leaseUntil > nowMs;
}

/** The dedupe decision for a post in the head's own state. */
export function ledgerDecision(
  head: Pick<Head, 'pending' | 'leaseUntil'>,
  nowMs: number,
): 'already notified' | 'in flight' | 'repair' {
  if (head.pending.length === 0) return 'already notified';
  return head.leaseUntil > nowMs ? 'in flight' : 'repair';
}
