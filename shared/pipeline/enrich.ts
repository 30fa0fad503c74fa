/**
 * The enrich stage: fresh Prometheus values, a likely cause and a forecast for the alerts to send, and who
 * acknowledged them, asked side by side. A storm is enriched whole: enrichment queries once per signal and
 * kind for all alerts of the group (`shared/enrich`), so a digest of 5,000 alerts costs Prometheus what one
 * alert does, and the digest shows values and the cause most alerts share.
 *
 * Enrichment may start during the claim stage ({@link startEarly}): after the group's batched dedupe read,
 * the firings it found no live occurrence of (`unseen`) are almost always the alerts the claims hand to
 * this caller, so their queries need not wait for the claim's round trip. The claims still decide alone:
 * the early result is used only when the alerts to send are exactly the alerts it enriched (the same
 * objects, in the same order); otherwise those alerts are enriched again and the early result dropped.
 * Enrichment only reads (Prometheus), so a claim lost to a racing post costs queries, never a message.
 */
import type { Alert } from '../alertmanager/schema.js';
import type { Enrichment } from '../enrich/types.js';
import { noMetrics } from '../metrics/catalogue.js';
import { unseen, type Seen } from '../store/seen.js';
import type { EarlyEnrichment, GroupContext } from './context.js';
import { stormSized } from './select.js';

/** Enriches the alerts to send (`group.enrichments`) and reads who acknowledged them (`group.ackView`). */
export async function enrich(group: GroupContext): Promise<void> {
  const { message, deps, toSend, log } = group;
  const alerts = toSend.map((c) => c.alert);
  if (stormSized(toSend, message.truncatedAlerts))
    log.info('alert storm', { alerts: toSend.length, truncatedAlerts: message.truncatedAlerts });
  const [enrichments, ackView] = await Promise.all([
    enrichmentOf(group, alerts),
    deps.ack && toSend.length ? deps.ack.prepare(alerts, message.groupKey) : undefined,
  ]);
  group.enrichments = enrichments;
  if (ackView) group.ackView = ackView;
}

/**
 * Starts enriching the likely new firings of a group, if any.
 * @param read per alert, what the batched read saw (`undefined`: not read; such an alert is not started
 *   early) and the channels its route selects (an alert routed nowhere is never sent)
 */
export function startEarly(
  group: GroupContext,
  read: { seen: readonly (Seen | undefined)[]; routed: readonly string[][]; nowMs: number },
): EarlyEnrichment | undefined {
  const likely = group.message.alerts.filter((alert, i) => {
    const seen = read.seen[i];
    return seen !== undefined && read.routed[i]!.length > 0 && unseen(alert, seen, read.nowMs);
  });
  if (likely.length === 0) return undefined;
  const prepared = likely.map((alert) => group.cut(alert));
  return { alerts: prepared, result: timed(group, prepared) };
}

/**
 * The enrichments of `alerts` (the group's alerts to send): the early result when it enriched exactly
 * these, else a new enrichment. Either way the early one is awaited: nothing it does outlives the request.
 */
async function enrichmentOf(group: GroupContext, alerts: Alert[]): Promise<Map<string, Enrichment>> {
  const early = group.early;
  if (early && early.alerts.length === alerts.length && early.alerts.every((a, i) => a === alerts[i]))
    return early.result;
  const [fresh] = await Promise.all([
    alerts.length ? timed(group, alerts) : new Map<string, Enrichment>(),
    early?.result,
  ]);
  return fresh;
}

/** `deps.enrich`, logged and counted (`enrichment_duration_seconds`, `enrichment_unavailable_total`). */
async function timed(group: GroupContext, alerts: Alert[]): Promise<Map<string, Enrichment>> {
  const { deps, log } = group;
  const metrics = deps.metrics ?? noMetrics;
  const started = deps.now();
  const enrichments = await deps.enrich(alerts);
  log.info('group enriched', { alerts: alerts.length, durationMs: deps.now() - started });
  metrics.observe('enrichment_duration_seconds', {}, (deps.now() - started) / 1000);
  for (const e of enrichments.values())
    if (e.status === 'unavailable') metrics.inc('enrichment_unavailable_total', { reason: e.cause ?? 'error' });
  return enrichments;
}
