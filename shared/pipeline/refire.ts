/**
 * The re-fire stage, right after the claims: an alert sent firing again after it was announced
 * resolved, with the same `startsAt` (`resolved before`, see `shared/dedupe/occurrence.ts`), is a
 * real re-fire or a stale copy, and only the source of truth can tell; so is a resolve after such a
 * re-fire that is no newer than the resolve before it (`fired again since`). The source is asked once
 * per group, for these rare candidates only (`shared/alert-state/`). A re-fire is announced unless the
 * source says resolved; that resolve only if the source says resolved. Both errors left open lean to
 * a stale FIRING, never to silence during an incident. A stale copy is not sent, and the alert's
 * history says why. A source that cannot answer is logged.
 */
import pLimit from 'p-limit';
import { normaliseTime } from '../store/alert-record-items.js';
import type { AckTracker } from '../ack/tracker.js';
import type { Alert } from '../alertmanager/schema.js';
import { allUnknown, type AlertStateSource, type Verdict } from '../alert-state/types.js';
import { CANDIDATES, type Claim, type DedupeStore } from '../store/dedupe.js';
import type { Logger } from '../core/logger.js';
import type { Notification } from '../render/notification.js';

/** Budget of the source-of-truth queries of one group, milliseconds (the delivery budget is 20 s). */
export const REFIRE_CHECK_TIMEOUT_MS = 2_000;
const CONCURRENCY = 16;

export interface Claimed {
  alert: Alert;
  /** The channels routed to the alert. */
  channels: string[];
  claim: Claim;
}

export interface RefireDeps {
  store: DedupeStore;
  alertState?: AlertStateSource;
  ack?: AckTracker;
  logger: Logger;
  /** Epoch milliseconds. */
  now(): number;
}

/**
 * Settles every candidate claim of `claimed` (`resolved before`, `fired again since`; others pass
 * unchanged) and records in the alerts' history why stale copies were not sent.
 */
export async function confirmRefires<T extends Claimed>(claimed: T[], deps: RefireDeps, log: Logger): Promise<T[]> {
  const candidates = claimed.filter((c) => CANDIDATES.has(c.claim.decision));
  if (candidates.length === 0) return claimed;
  const verdicts = await verdictsOf(candidates.map((c) => c.alert), deps);
  const limit = pLimit(CONCURRENCY);
  const settled = await Promise.all(
    claimed.map((c) => (CANDIDATES.has(c.claim.decision) ? limit(async () => ({ ...c, claim: await settle(c, verdicts.get(c.alert.fingerprint), deps, log) })) : c)),
  );
  await recordStale(settled.filter((c) => c.claim.decision === 'stale copy'), verdicts, deps, log);
  return settled;
}

async function verdictsOf(alerts: Alert[], deps: RefireDeps): Promise<Map<string, Verdict>> {
  if (!deps.alertState) return allUnknown(alerts, 'none', 'no source of truth configured (PROMETHEUS_URL, ALERTMANAGER_URL)');
  return deps.alertState.statesOf(alerts, AbortSignal.timeout(REFIRE_CHECK_TIMEOUT_MS));
}

/**
 * A candidate re-fire is stale only when the source says resolved; a candidate stale resolve only
 * when the source does not say resolved: either way an undecided question leaves the channels
 * saying FIRING, never a wrong RESOLVED.
 */
function isStale(alert: Alert, verdict: Verdict | undefined): boolean {
  return alert.status === 'firing' ? verdict?.state === 'resolved' : verdict?.state !== 'resolved';
}

async function settle(c: Claimed, verdict: Verdict | undefined, deps: RefireDeps, log: Logger): Promise<Claim> {
  const fields = { fingerprint: c.alert.fingerprint, alertname: c.alert.labels.alertname, status: c.alert.status, startsAt: c.alert.startsAt, source: verdict?.source ?? 'none', verdict: verdict?.state ?? 'unknown' };
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
  log.info('alert deduped', { ...fields, decision: claim.decision, generation: claim.event.generation, pending: claim.pending });
  return claim;
}

/** Why a stale copy was not sent, for the alert's history. */
function staleReason(alert: Alert, verdict: Verdict | undefined): string {
  if (alert.status === 'firing') return `${verdict?.source ?? 'the source of truth'} says it is resolved`;
  if (verdict?.state === 'firing') return `${verdict.source} says it still fires`;
  return 'not newer than the resolve announced before it fired again (endsAt), and no source of truth says it resolved';
}

/** One history event per stale copy (a no-op for an alert without a record). Never throws. */
async function recordStale(stale: Claimed[], verdicts: Map<string, Verdict>, deps: RefireDeps, log: Logger): Promise<void> {
  const store = deps.ack?.store;
  if (!store) return;
  await Promise.all(
    stale.map(async (c) => {
      const event = { type: 'not announced' as const, status: c.alert.status, decision: 'stale copy' as const, reason: staleReason(c.alert, verdicts.get(c.alert.fingerprint)), startsAt: normaliseTime(c.alert.startsAt) };
      await store.addHistory(c.alert.fingerprint, event, deps.now()).catch((err: Error) => log.error('ack history write failed', { fingerprint: c.alert.fingerprint, error: err.message }));
    }),
  );
}

/** Marks the alerts of a later generation (a re-fire, its resolve) on the notification; unchanged when none. */
export function markGenerations(notification: Notification, claimed: { alert: Alert; claim: Claim }[]): Notification {
  const later = claimed.filter((c) => c.claim.event.generation > 0).map((c) => [c.alert.fingerprint, c.claim.event.generation] as const);
  return later.length ? { ...notification, generations: Object.fromEntries(later) } : notification;
}
