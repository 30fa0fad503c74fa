/**
 * The pipeline for one Alertmanager webhook message, in the order of its stages:
 * route and dedupe (claim each alert event for the channels its route selects) → re-fires (confirm
 * with the source of truth an alert firing again after its announced resolve, `refire.ts`) → flapping (mark
 * alerts firing again within the flap window) → enrich (only what is new; a storm too, with the same
 * O(kinds) queries, so its digest can rank and explain) → fan out (one message per channel,
 * each with the alerts that channel still lacks, `fan-out.ts`; each channel's success goes to the
 * ledger as soon as it happens, `record.ts`) → release failed claims
 * → acknowledgement state (`shared/ack/tracker.ts`: who was told, escalation scheduled or cancelled).
 * One bad alert never blocks its group: oversized or invalid text is cut before fan-out (`shared/render/reduce.ts`).
 * With `ack` set, each channel's message carries its own signed Acknowledge link, and a resolved
 * alert carries who acknowledged it.
 */
import pLimit from 'p-limit';
import type { Alert, WebhookMessage } from '../alertmanager/schema.js';
import type { Logger } from '../core/logger.js';
import type { Enrichment } from '../enrich/types.js';
import { noMetrics, type Metrics } from '../metrics/catalogue.js';
import { cutOversized } from '../render/reduce.js';
import { eventKey, type Claim, type DedupeStore, type FlapRun, type Seen } from '../store/dedupe.js';
import { stormSized } from './select.js';
import type { ClaimedAlert, GroupContext, GroupResult, PipelineDeps } from './context.js';
import { fanOutTo } from './fan-out.js';
import { DEFAULT_FLAP_WINDOW_MS, MAX_TRACKED_FIRINGS, recordFirings } from './flap.js';
import { BATCHED_CONCURRENCY, DeliveryLedger } from './record.js';
import { confirmRefires } from './refire.js';
import { type EarlyEnrichment, enrichmentOf, startEarly } from './early-enrich.js';

export type { GroupResult, PipelineDeps } from './context.js';

/**
 * DynamoDB calls in flight at once for one group (a storm can bring thousands of alerts): enough to
 * hide DynamoDB's few milliseconds per call (5,000 claims take 5,000 / 64 rounds), within the
 * SDK's 50 sockets plus queueing.
 */
const STORE_CONCURRENCY = 64;

/**
 * Runs one webhook message through the pipeline.
 * @throws the dedupe store's error when DynamoDB is unreachable (nothing was sent; answer 5xx)
 */
export async function processGroup(message: WebhookMessage, deps: PipelineDeps): Promise<GroupResult> {
  const receivedAt = deps.now();
  const log = deps.logger.child({ groupKey: message.groupKey, receiver: message.receiver });
  log.info('group received', { status: message.status, alerts: message.alerts.length, truncatedAlerts: message.truncatedAlerts });

  // Cut after routing and claiming (both read the alert as sent): what is rendered and stored fits everywhere.
  const cut = cutOnce(log);
  let early: EarlyEnrichment | undefined;
  const enrich = (alerts: Alert[]) => enrichTimed(alerts, deps, log);
  const claiming = claimAll(message.alerts, deps, log, (read) => {
    early = startEarly(message.alerts, read, deps.store, cut, enrich);
  }).then((claims) => confirmRefires(claims, deps, log));
  const claimed = await claiming.catch(async (err: unknown) => {
    await early?.result; // nothing outlives the answer (Lambda)
    throw err;
  });
  // Counted once settled: a candidate re-fire or resolve is counted as what it turned out to be.
  for (const c of claimed) deps.metrics?.inc('dedupe_decisions_total', { decision: c.claim.decision });
  const toSend = claimed.filter((c) => c.claim.pending.length > 0).map((c) => ({ ...c, alert: cut(c.alert) }));
  const { flapping, runs, enrichments, ackView } = await prepareGroup(message, toSend, deps, log, receivedAt, (alerts) => enrichmentOf(alerts, early, enrich));
  // With alert records, an alert every channel accepted is recorded and ledgered by one write (`record.ts`).
  const records = deps.ack?.session(message, enrichments);
  // An alert whose record the group's read found absent: its batched write need not read it again (`recordAbsent`).
  const absent = new Map(toSend.flatMap((c) => (c.seen && deps.store.recordAbsent ? [[c.claim.event.key, deps.store.recordAbsent(c.seen)] as const] : [])));
  // One whose record it found: its new occurrence is not tried in a transaction of new records (`recordFound`).
  const found = new Set(toSend.flatMap((c) => (c.seen && deps.store.recordFound?.(c.seen) ? [c.claim.event.key] : [])));
  const mark = records && ((alert: Alert, claim: Claim, channels: string[]) => records.delivered({ alert, channels, generation: claim.event.generation, flapRun: runs.get(alert.fingerprint), recordAbsentAt: absent.get(claim.event.key), recordFound: found.has(claim.event.key) }, claim.event.key));
  // Batched record writes: many in flight, and a storm's wait for all its digests, so that they go out in a few batches.
  const batched = records?.batches === true;
  const ledger = new DeliveryLedger(deps.store, log, mark, batched ? { concurrency: BATCHED_CONCURRENCY, ...(stormSized(toSend, message.truncatedAlerts) && { coalesceMs: Number.POSITIVE_INFINITY }) } : {});
  const group: GroupContext = { message, deps, log, receivedAt, toSend, enrichments, flapping, ackView, ledger };
  const outcomes = await Promise.all(deps.channels.map((channel) => fanOutTo(channel, group)));
  const channels = Object.fromEntries(outcomes.filter((o) => o.outcome).map((o) => [o.channel, o.outcome!]));
  const failed = new Set(outcomes.filter((o) => o.outcome?.status === 'failed').map((o) => o.channel));
  const undelivered = new Set(outcomes.filter((o) => o.outcome && o.outcome.status !== 'delivered').map((o) => o.channel));
  const sent = toSend.map((c) => ({ alert: c.alert, channels: c.claim.pending.filter((name) => channels[name]?.status === 'delivered'), generation: c.claim.event.generation, eventKey: c.claim.event.key, flapRun: runs.get(c.alert.fingerprint) }));
  // The ledger first: the records it wrote with their delivery mark are not written again.
  await settleLedger(ledger, toSend, undelivered, deps, log);
  await records?.finish(sent);

  const count = (d: Claim['decision']) => claimed.filter((c) => c.claim.decision === d).length;
  const inFlight = count('in flight');
  return {
    received: message.alerts.length,
    notified: toSend.length,
    duplicates: count('already notified'),
    stale: count('stale copy'),
    inFlight,
    channels,
    // In flight is not done: if the holder dies, only Alertmanager's retry delivers those alerts.
    ok: failed.size === 0 && inFlight === 0,
  };
}

/**
 * What fan-out needs besides the claims, asked side by side (none needs another's answer): which
 * alerts flap, the enrichment, who acknowledged. A storm is enriched whole: enrichment queries once
 * per signal and kind for all alerts of the group (`shared/enrich`), so a digest of 5,000 alerts costs
 * Prometheus what one alert does, and the digest shows values and the cause most alerts share.
 */
async function prepareGroup(message: WebhookMessage, toSend: ClaimedAlert[], deps: PipelineDeps, log: Logger, receivedAt: number, enrich: (alerts: Alert[]) => Promise<Map<string, Enrichment>>) {
  const alerts = toSend.map((c) => c.alert);
  if (stormSized(toSend, message.truncatedAlerts)) log.info('alert storm', { alerts: toSend.length, truncatedAlerts: message.truncatedAlerts });
  const windowMs = deps.flapWindowMs ?? DEFAULT_FLAP_WINDOW_MS;
  // With alert records, a firing's flap run comes from the record read with its claim, and is stored by the record's write.
  const runs = deps.ack ? runsFromRead(toSend, deps.store, windowMs, receivedAt) : new Map<string, FlapRun>();
  const [flapping, enrichments, ackView] = await Promise.all([
    recordFirings(alerts, deps.store, windowMs, receivedAt, log, runs),
    enrich(alerts),
    deps.ack && toSend.length ? deps.ack.prepare(alerts) : undefined,
  ]);
  return { flapping, runs, enrichments, ackView };
}

/** The flap runs of the firing alerts the group's batched read saw (none when flapping is off or not tracked). */
function runsFromRead(toSend: ClaimedAlert[], store: DedupeStore, windowMs: number, nowMs: number): Map<string, FlapRun> {
  const runs = new Map<string, FlapRun>();
  const firing = toSend.filter((c) => c.alert.status === 'firing' && !Number.isNaN(Date.parse(c.alert.startsAt)));
  if (!store.runOf || windowMs <= 0 || firing.length > MAX_TRACKED_FIRINGS) return runs;
  for (const c of firing) {
    const run = c.seen && store.runOf(c.alert, c.seen, windowMs, nowMs);
    if (run) runs.set(c.alert.fingerprint, run);
  }
  return runs;
}

/** {@link cutOversized} once per alert object: the early enrichment and fan-out then share one copy. */
function cutOnce(log: Logger): (alert: Alert) => Alert {
  const cut = new Map<Alert, Alert>();
  return (alert) => {
    let copy = cut.get(alert);
    if (copy) return copy;
    copy = cutOversized(alert, log);
    cut.set(alert, copy);
    return copy;
  };
}

async function enrichTimed(alerts: Alert[], deps: PipelineDeps, log: Logger): Promise<Map<string, Enrichment>> {
  const started = deps.now();
  const enrichments = await deps.enrich(alerts);
  log.info('group enriched', { alerts: alerts.length, durationMs: deps.now() - started });
  countEnrichment(enrichments, (deps.now() - started) / 1000, deps.metrics ?? noMetrics);
  return enrichments;
}

/**
 * Waits for the ledger, then frees the claims that still have undelivered channels. A claim whose
 * ledger write failed keeps its lease: releasing it would let the retry re-send to the channels
 * that already have the alert. An unledgered alert holds no claim to release.
 */
async function settleLedger(ledger: DeliveryLedger, toSend: ClaimedAlert[], undelivered: Set<string>, deps: PipelineDeps, log: Logger): Promise<void> {
  const unrecorded = await ledger.settle();
  const ledgered = toSend.filter((c) => !c.unledgered);
  if (undelivered.size) await releaseFailed(ledgered.filter((c) => !unrecorded.has(c.claim.event.key)), undelivered, deps, log);
}

/**
 * Claims every alert. If any claim fails, the claims already taken are released before the error
 * is rethrown: otherwise Alertmanager's retry would find them "in flight" until their lease ran out.
 */
async function claimAll(alerts: Alert[], deps: PipelineDeps, log: Logger, onRead: (read: { seen: (Seen | undefined)[]; routed: string[][]; nowMs: number }) => void): Promise<ClaimedAlert[]> {
  const now = deps.now();
  // One batched read first: duplicates are then settled without a write, new alerts with one each
  // (or, where the store can batch them, a few writes for all: `DedupeStore.startMany`).
  const seen = await readAll(alerts, now, deps, log);
  const names = deps.channels.map((c) => c.name);
  const routed = alerts.map((alert) => (deps.route ? deps.route(alert.labels).filter((name) => names.includes(name)) : names));
  onRead({ seen, routed, nowMs: now });
  const started = deps.store.startMany && seen.length ? await deps.store.startMany(alerts.map((alert, i) => ({ alert, channels: routed[i]!, seen: seen[i] })), now) : [];
  const settled = await Promise.allSettled(claimEach(alerts, { seen, routed, started }, now, deps, log));
  const failure = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  const claimed = settled.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  if (!failure) return claimed;
  await releaseClaims(claimed.filter((c) => c.claim.pending.length > 0), deps, log);
  throw failure.reason;
}

/**
 * The group's dedupe records in one batched read. A batch that DynamoDB refuses as a whole
 * (`ValidationException`: one alert's key it will never accept) is not read: each alert is then
 * claimed alone, so that one bad alert does not block its group (see {@link unclaimable}).
 */
async function readAll(alerts: Alert[], now: number, deps: PipelineDeps, log: Logger): Promise<(Seen | undefined)[]> {
  if (!deps.store.readMany) return [];
  try {
    // A storm's new alerts: their records only for flap runs, which are not counted past MAX_TRACKED_FIRINGS.
    return await deps.store.readMany(alerts, now, { newRecordsUpTo: MAX_TRACKED_FIRINGS });
  } catch (err) {
    if ((err as Error | undefined)?.name !== 'ValidationException') throw err;
    log.warn('batched dedupe read refused', { alerts: alerts.length, error: (err as Error).message });
    return [];
  }
}

/** Per alert (by index): what the batched read saw, the channels its route selects, its batched claim if any. */
interface Claiming {
  seen: (Seen | undefined)[];
  routed: string[][];
  started: (Claim | undefined)[];
}

function claimEach(alerts: Alert[], { seen, routed: routes, started }: Claiming, now: number, deps: PipelineDeps, log: Logger): Promise<ClaimedAlert>[] {
  const limit = pLimit(STORE_CONCURRENCY);
  return (
    alerts.map((alert, i) =>
      limit(async () => {
        const routed = routes[i]!;
        const claim = started[i] ?? (await deps.store.claim(alert, routed, now, seen[i]).catch((err: unknown) => unclaimable(err, alert, log)));
        if (!claim) {
          const event = { key: eventKey(alert), status: alert.status, generation: 0 };
          return { alert, channels: routed, claim: { decision: 'first notification' as const, pending: routed, event }, unledgered: true as const };
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
        return { alert, channels: routed, claim, ...(seen[i] && { seen: seen[i] }) };
      }),
    )
  );
}

/**
 * A claim that DynamoDB refused for this alert's item alone (`ValidationException`: a refusal that
 * every retry would meet) must not fail the group: the alert is sent without dedupe (a duplicate on a
 * resend beats a lost alert) and logged as an error naming it. Any other error is rethrown (5xx).
 */
function unclaimable(err: unknown, alert: Alert, log: Logger): undefined {
  if ((err as Error | undefined)?.name !== 'ValidationException') throw err;
  log.error('alert not deduped', { fingerprint: alert.fingerprint, alertname: alert.labels.alertname, status: alert.status, error: (err as Error).message });
  return undefined;
}

/** Frees the claims that still have undelivered channels, so Alertmanager's retry repairs them at once. */
async function releaseFailed(toSend: ClaimedAlert[], failed: Set<string>, deps: PipelineDeps, log: Logger): Promise<void> {
  await releaseClaims(toSend.filter((c) => c.claim.pending.some((ch) => failed.has(ch))), deps, log);
}

async function releaseClaims(claims: ClaimedAlert[], deps: PipelineDeps, log: Logger): Promise<void> {
  const limit = pLimit(STORE_CONCURRENCY);
  await Promise.all(
    claims.map((c) =>
      limit(() =>
        deps.store.release(c.alert, c.claim.event).catch((err: Error) => {
          // The lease then runs out on its own; the repair only waits longer.
          log.warn('lease release failed', { fingerprint: c.alert.fingerprint, error: err.message });
        }),
      ),
    ),
  );
}

function countEnrichment(enrichments: Map<string, Enrichment>, seconds: number, metrics: Metrics): void {
  metrics.observe('enrichment_duration_seconds', {}, seconds);
  for (const e of enrichments.values()) {
    if (e.status === 'unavailable') metrics.inc('enrichment_unavailable_total', { reason: e.cause ?? 'error' });
  }
}
