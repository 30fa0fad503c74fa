/**
 * The claim stage: route each alert (the channels its route selects), read the group's dedupe records in
 * one batched read, and claim each alert event for its channels (`DedupeStore.claim`: of concurrent
 * deliverers one wins). Enrichment of the alerts the read found new starts here, while the claims are
 * written (`startEarly`, `enrich.ts`). If any claim fails, the claims already taken are released before
 * the error is rethrown: otherwise Alertmanager's retry would find them "in flight" until their lease ran out.
 */
import pLimit from 'p-limit';
import type { Alert } from '../alertmanager/schema.js';
import type { Logger } from '../core/logger.js';
import { StoredItemError } from '../store/stored-item.js';
import { eventKey } from '../store/keys.js';
import type { Seen } from '../store/seen.js';
import type { ClaimedAlert, GroupContext } from './context.js';
import { startEarly } from './enrich.js';
import { MAX_TRACKED_FIRINGS } from './flap.js';

/**
 * DynamoDB calls in flight at once for one group (a storm can bring thousands of alerts): enough to
 * hide DynamoDB's few milliseconds per call (5,000 claims take 5,000 / 64 rounds), within the
 * SDK's 50 sockets plus queueing.
 */
export const STORE_CONCURRENCY = 64;

/**
 * Claims every alert of the group (`group.claimed`), in payload order.
 * @throws the dedupe store's error when DynamoDB is unreachable (nothing was sent; answer 5xx), once the
 *   claims taken are released and the early enrichment is over (nothing outlives the answer in Lambda)
 */
export async function claim(group: GroupContext): Promise<void> {
  const { message, deps } = group;
  const now = deps.now();
  const alerts = message.alerts;
  // One batched read first: duplicates are then settled without a write, new alerts with one each.
  const seen = await readAll(group, now);
  const names = deps.channels.map((c) => c.name);
  const routed = alerts.map((a, i) => {
    const byRoute = deps.route ? deps.route(a.labels).filter((n) => names.includes(n)) : names;
    return a.status === 'resolved'
      ? [...byRoute, ...escalatedTo(deps.escalationChannels, names, byRoute, seen[i])]
      : byRoute;
  });
  group.early = startEarly(group, { seen, routed, nowMs: now });
  const limit = pLimit(STORE_CONCURRENCY);
  const settled = await Promise.allSettled(
    alerts.map((alert, i) => limit(() => claimOne(group, { alert, channels: routed[i]!, seen: seen[i] }, now))),
  );
  const failure = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  group.claimed = settled.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  if (!failure) return;
  await releaseClaims(
    group,
    group.claimed.filter((c) => c.claim.pending.length > 0),
  );
  await group.early?.result;
  throw failure.reason;
}

/**
 * The `ESCALATION_CHANNELS` instances an escalation of the alert reached (its record's channels), of the
 * channels `names`, beside its routes: its resolve goes there too. Without the record (not read), none.
 */
function escalatedTo(
  escalationChannels: readonly string[] | undefined,
  names: string[],
  routed: string[],
  seen: Seen | undefined,
): string[] {
  const reached = seen?.record?.channels;
  if (!reached || !escalationChannels) return [];
  return escalationChannels.filter((n) => reached.has(n) && names.includes(n) && !routed.includes(n));
}

/**
 * The group's dedupe records in one batched read. A batch that DynamoDB refuses as a whole
 * (`ValidationException`: one alert's key it will never accept) is not read: each alert is then
 * claimed alone, so that one bad alert does not block its group (see {@link unclaimable}).
 */
async function readAll(group: GroupContext, now: number): Promise<(Seen | undefined)[]> {
  const { message, deps, log } = group;
  try {
    // A storm's new alerts: their records only for flap runs, which are not counted past MAX_TRACKED_FIRINGS.
    return await deps.store.readMany(message.alerts, now, { newRecordsUpTo: MAX_TRACKED_FIRINGS });
  } catch (err) {
    if ((err as Error | undefined)?.name !== 'ValidationException') throw err;
    log.warn('batched dedupe read refused', { alerts: message.alerts.length, error: (err as Error).message });
    return [];
  }
}

/** One alert's claim; an alert the store refuses is sent without dedupe (`unledgered`). */
async function claimOne(
  group: GroupContext,
  { alert, channels, seen }: { alert: Alert; channels: string[]; seen?: Seen },
  now: number,
): Promise<ClaimedAlert> {
  const { deps, log } = group;
  const claim = await deps.store
    .claim(alert, channels, now, seen)
    .catch((err: unknown) => unclaimable(err, alert, log));
  if (!claim) {
    const event = { key: eventKey(alert), status: alert.status, generation: 0 };
    const unledgered = { decision: 'first notification' as const, pending: channels, event };
    return { alert, channels, claim: unledgered, unledgered: true };
  }
  log.info('alert deduped', {
    fingerprint: alert.fingerprint,
    alertname: alert.labels.alertname,
    status: alert.status,
    startsAt: alert.startsAt,
    decision: claim.decision,
    generation: claim.event.generation,
    pending: claim.pending,
  });
  return { alert, channels, claim, ...(seen && { seen }) };
}

/**
 * A claim that DynamoDB refused for this alert's item alone (`ValidationException`: a refusal that
 * every retry would meet), or whose stored item does not match its layout (`StoredItemError`), must not
 * fail the group: the alert is sent without dedupe (a duplicate on a resend beats a lost alert) and logged
 * as an error naming it. Any other error is rethrown (5xx).
 */
function unclaimable(err: unknown, alert: Alert, log: Logger): undefined {
  if (!(err instanceof StoredItemError) && (err as Error | undefined)?.name !== 'ValidationException') throw err;
  log.error('alert not deduped', {
    fingerprint: alert.fingerprint,
    alertname: alert.labels.alertname,
    status: alert.status,
    error: (err as Error).message,
  });
  return undefined;
}

/** Frees claims early, so that Alertmanager's retry repairs them at once (a failed release: the lease runs out). */
export async function releaseClaims(group: GroupContext, claims: readonly ClaimedAlert[]): Promise<void> {
  const limit = pLimit(STORE_CONCURRENCY);
  await Promise.all(
    claims.map((c) =>
      limit(() =>
        group.deps.store.release(c.alert, c.claim.event).catch((err: Error) => {
          group.log.warn('lease release failed', { fingerprint: c.alert.fingerprint, error: err.message });
        }),
      ),
    ),
  );
}
