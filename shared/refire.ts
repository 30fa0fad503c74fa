/**
 * The re-fire stage, right after the claims: an alert sent firing again after it was announced
 * resolved, with the same `startsAt` (`resolved before`, see `shared/dedupe/occurrence.ts`), is a
 * real re-fire or a stale copy, and only the source of truth can tell. Asked once per group for
 * these rare candidates only (`shared/alert-state/`): a confirmed or undecided candidate is claimed
 * as `firing again`; one the source says is resolved is a `stale copy`, not sent, and the alert's
 * history says why. No source configured, or one that cannot answer: announced, and logged.
 */
import pLimit from 'p-limit';
import { normaliseTime } from './ack/records.js';
import type { AckTracker } from './ack/tracker.js';
import type { Alert } from './alertmanager/schema.js';
import { allUnknown, type AlertStateSource, type Verdict } from './alert-state/types.js';
import type { Claim, DedupeStore } from './dedupe/store.js';
import type { Logger } from './logger.js';
import type { Notification } from './notification.js';

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

/** Settles every `resolved before` claim of `claimed` (others pass unchanged) and records why stale copies were not sent. */
export async function confirmRefires<T extends Claimed>(claimed: T[], deps: RefireDeps, log: Logger): Promise<T[]> {
  const candidates = claimed.filter((c) => c.claim.decision === 'resolved before');
  const verdicts = candidates.length ? await verdictsOf(candidates.map((c) => c.alert), deps, log) : new Map<string, Verdict>();
  const limit = pLimit(CONCURRENCY);
  const settled = await Promise.all(
    claimed.map((c) =>
      c.claim.decision !== 'resolved before' ? c : limit(async () => ({ ...c, claim: await settle(c, verdicts.get(c.alert.fingerprint), deps, log) })),
    ),
  );
  await recordStale(settled, verdicts, deps, log);
  return settled;
}

async function verdictsOf(alerts: Alert[], deps: RefireDeps, log: Logger): Promise<Map<string, Verdict>> {
  if (!deps.alertState) return allUnknown(alerts, 'none', 'no source of truth configured (PROMETHEUS_URL, ALERTMANAGER_URL)');
  const verdicts = await deps.alertState.statesOf(alerts, AbortSignal.timeout(REFIRE_CHECK_TIMEOUT_MS));
  for (const a of alerts.filter((x) => verdicts.get(x.fingerprint)?.state !== 'firing' && verdicts.get(x.fingerprint)?.state !== 'resolved')) {
    log.warn('alert state unknown, announcing it firing again', { fingerprint: a.fingerprint, alertname: a.labels.alertname, reason: verdicts.get(a.fingerprint)?.reason ?? 'no answer' });
  }
  return verdicts;
}

async function settle(c: Claimed, verdict: Verdict | undefined, deps: RefireDeps, log: Logger): Promise<Claim> {
  const fields = { fingerprint: c.alert.fingerprint, alertname: c.alert.labels.alertname, startsAt: c.alert.startsAt, source: verdict?.source ?? 'none' };
  if (verdict?.state === 'resolved') {
    log.info('alert deduped', { ...fields, status: c.alert.status, decision: 'stale copy', generation: c.claim.event.generation });
    return { ...c.claim, decision: 'stale copy' };
  }
  let claim: Claim;
  try {
    claim = await deps.store.refire(c.alert, c.claim, c.channels, deps.now());
  } catch (err) {
    // Nothing was claimed: answered as in flight (5xx), Alertmanager's retry asks again.
    log.error('re-fire claim failed', { ...fields, error: (err as Error).message });
    return { ...c.claim, decision: 'in flight' };
  }
  log.info('alert deduped', { ...fields, status: c.alert.status, decision: claim.decision, generation: claim.event.generation, verdict: verdict?.state ?? 'unknown', pending: claim.pending });
  return claim;
}

/** One history event per stale copy (a no-op for an alert without a record). Never throws. */
async function recordStale(claimed: Claimed[], verdicts: Map<string, Verdict>, deps: RefireDeps, log: Logger): Promise<void> {
  const store = deps.ack?.store;
  if (!store) return;
  await Promise.all(
    claimed.filter((c) => c.claim.decision === 'stale copy').map(async (c) => {
      const verdict = verdicts.get(c.alert.fingerprint);
      const reason = verdict ? `${verdict.source} says it is resolved` : 'older than the resolve already announced (endsAt)';
      await store
        .addHistory(c.alert.fingerprint, { type: 'not announced', status: c.alert.status, decision: 'stale copy', reason, startsAt: normaliseTime(c.alert.startsAt) }, deps.now())
        .catch((err: Error) => log.error('ack history write failed', { fingerprint: c.alert.fingerprint, error: err.message }));
    }),
  );
}

/** Marks the alerts of a later generation (a re-fire, its resolve) on the notification; unchanged when none. */
export function markGenerations(notification: Notification, claimed: { alert: Alert; claim: Claim }[]): Notification {
  const later = claimed.filter((c) => c.claim.event.generation > 0).map((c) => [c.alert.fingerprint, c.claim.event.generation] as const);
  return later.length ? { ...notification, generations: Object.fromEntries(later) } : notification;
}
