/**
 * The re-fire stage, right after the claims: an alert sent firing again after it was announced
 * resolved, with the same `startsAt` (`resolved before`, see `shared/store/occurrence.ts`), is a
 * real re-fire or a stale copy, and only the source of truth can tell; so is a resolve after such a
 * re-fire that is no newer than the resolve before it (`fired again since`). The source is asked once
 * per group, for these rare candidates only (`shared/alert-state/`). A re-fire is announced unless the
 * source says resolved; that resolve only if the source says resolved. Both errors left open lean to
 * a stale FIRING, never to silence during an incident. A stale copy is not sent, and the alert's
 * history says why. A source that cannot answer is logged.
 *
 * Once every claim is settled, the stage counts the decisions (`dedupe_decisions_total`) and names the
 * alerts some channel still lacks (`group.toSend`), cut to what every platform takes.
 */
import pLimit from 'p-limit';
import type { Alert } from '../alertmanager/schema.js';
import { allUnknown, type Verdict } from '../alert-state/types.js';
import type { Notification } from '../render/notification.js';
import { CANDIDATES, type Claim } from '../store/dedupe.js';
import { normaliseTime } from '../store/keys.js';
import type { ClaimedAlert, GroupContext } from './context.js';

/** Budget of the source-of-truth queries of one group, milliseconds (the delivery budget is 20 s). */
export const REFIRE_CHECK_TIMEOUT_MS = 2_000;
const CONCURRENCY = 16;

/** Settles every candidate claim of `group.claimed` (others pass unchanged), then names the alerts to send. */
export async function refire(group: GroupContext): Promise<void> {
  const candidates = group.claimed.filter((c) => CANDIDATES.has(c.claim.decision) || pendingRefire(c));
  if (candidates.length) {
    const verdicts = await verdictsOf(
      group,
      candidates.map((c) => c.alert),
    );
    const limit = pLimit(CONCURRENCY);
    group.claimed = await Promise.all(
      group.claimed.map((c) => {
        const verdict = verdicts.get(c.alert.fingerprint);
        if (CANDIDATES.has(c.claim.decision))
          return limit(async () => ({ ...c, claim: await settle(group, c, verdict) }));
        return pendingRefire(c) ? limit(async () => ({ ...c, claim: await recheck(group, c, verdict) })) : c;
      }),
    );
    await recordStale(
      group,
      group.claimed.filter((c) => c.claim.decision === 'stale copy'),
      verdicts,
    );
  }
  // Counted once settled: a candidate re-fire or resolve is counted as what it turned out to be. One increment
  // per decision, not per alert: in Lambda each increment is a log line (EMF), and a storm has thousands.
  const decisions = new Map<string, number>();
  for (const c of group.claimed) decisions.set(c.claim.decision, (decisions.get(c.claim.decision) ?? 0) + 1);
  for (const [decision, n] of decisions) group.deps.metrics?.inc('dedupe_decisions_total', { decision }, n);
  group.toSend = group.claimed
    .filter((c) => c.claim.pending.length > 0)
    .map((c) => ({ ...c, alert: group.cut(c.alert) }));
}

async function verdictsOf(group: GroupContext, alerts: Alert[]): Promise<Map<string, Verdict>> {
  const source = group.deps.alertState;
  if (!source) return allUnknown(alerts, 'none', 'no source of truth configured (PROMETHEUS_URL, ALERTMANAGER_URL)');
  return source.statesOf(alerts, AbortSignal.timeout(REFIRE_CHECK_TIMEOUT_MS));
}

/**
 * A candidate re-fire is stale only when the source says resolved; a candidate stale resolve only
 * when the source does not say resolved: either way an undecided question leaves the channels
 * saying FIRING, never a wrong RESOLVED.
 */
function isStale(alert: Alert, verdict: Verdict | undefined): boolean {
  return alert.status === 'firing' ? verdict?.state === 'resolved' : verdict?.state !== 'resolved';
}

async function settle(group: GroupContext, c: ClaimedAlert, verdict: Verdict | undefined): Promise<Claim> {
  const { deps, log } = group;
  const fields = {
    fingerprint: c.alert.fingerprint,
    alertname: c.alert.labels.alertname,
    status: c.alert.status,
    startsAt: c.alert.startsAt,
    source: verdict?.source ?? 'none',
    verdict: verdict?.state ?? 'unknown',
  };
  if (verdict?.state !== 'firing' && verdict?.state !== 'resolved' && deps.alertState) {
    const outcome = c.alert.status === 'firing' ? 'announcing it firing again' : 'keeping it firing';
    log.warn(`alert state unknown, ${outcome}`, { ...fields, reason: verdict?.reason ?? 'no answer' });
  }
  if (isStale(c.alert, verdict)) {
    log.info('alert deduped', { ...fields, decision: 'stale copy', generation: c.claim.event.generation });
    return { ...c.claim, decision: 'stale copy' };
  }
  let claim: Claim;
  try {
    claim = await deps.store.confirm(c.alert, c.claim, c.channels, deps.now());
  } catch (err) {
    // Nothing was claimed: answered as in flight (5xx), Alertmanager's retry asks again.
    log.error('re-fire claim failed', { ...fields, error: (err as Error).message });
    return { ...c.claim, decision: 'in flight' };
  }
  const { decision, event, pending } = claim;
  log.info('alert deduped', { ...fields, decision, generation: event.generation, pending });
  return claim;
}

/**
 * A re-fire (generation ≥ 1) that some channel still lacks (a channel failed when it was announced): its
 * retry is a copy of a firing the source of truth may since have seen resolve, so it is asked again.
 */
function pendingRefire(c: ClaimedAlert): boolean {
  return c.claim.decision === 'repair' && c.alert.status === 'firing' && c.claim.event.generation > 0;
}

/**
 * A pending re-fire's retry: sent on, unless the source now says resolved (a page for something that is
 * over); then a stale copy, its lease given back so that the resolve is not held up.
 */
async function recheck(group: GroupContext, c: ClaimedAlert, verdict: Verdict | undefined): Promise<Claim> {
  if (verdict?.state !== 'resolved') return c.claim;
  const { deps, log } = group;
  await deps.store.release(c.alert, c.claim.event).catch((err: Error) => {
    log.warn('lease release failed', { fingerprint: c.alert.fingerprint, error: err.message });
  });
  log.info('alert deduped', {
    fingerprint: c.alert.fingerprint,
    alertname: c.alert.labels.alertname,
    status: c.alert.status,
    decision: 'stale copy',
    source: verdict.source,
    verdict: verdict.state,
    generation: c.claim.event.generation,
  });
  return { ...c.claim, decision: 'stale copy', pending: [] };
}

/** Why a stale copy was not sent, for the alert's history. */
function staleReason(alert: Alert, verdict: Verdict | undefined): string {
  if (alert.status === 'firing') return `${verdict?.source ?? 'the source of truth'} says it is resolved`;
  if (verdict?.state === 'firing') return `${verdict.source} says it still fires`;
  return 'not newer than the resolve announced before it fired again (endsAt), and no source of truth says it resolved';
}

/** One history event per stale copy (a no-op for an alert without a record). Never throws. */
async function recordStale(group: GroupContext, stale: ClaimedAlert[], verdicts: Map<string, Verdict>): Promise<void> {
  const { deps, log } = group;
  await Promise.all(
    stale.map(async (c) => {
      const event = {
        type: 'not announced' as const,
        status: c.alert.status,
        decision: 'stale copy' as const,
        reason: staleReason(c.alert, verdicts.get(c.alert.fingerprint)),
        startsAt: normaliseTime(c.alert.startsAt),
      };
      await deps.alerts.history
        .add(c.alert.fingerprint, event, deps.now())
        .catch((err: Error) =>
          log.error('ack history write failed', { fingerprint: c.alert.fingerprint, error: err.message }),
        );
    }),
  );
}

/** Marks the alerts of a later generation (a re-fire, its resolve) on the notification; unchanged when none. */
export function markGenerations(notification: Notification, claimed: { alert: Alert; claim: Claim }[]): Notification {
  const later = claimed
    .filter((c) => c.claim.event.generation > 0)
    .map((c) => [c.alert.fingerprint, c.claim.event.generation] as const);
  return later.length ? { ...notification, generations: Object.fromEntries(later) } : notification;
}
