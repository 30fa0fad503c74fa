/**
 * Enrichment started while the claims are written: after the group's batched dedupe read, the
 * firings it found no live occurrence of (`DedupeStore.unseen`) are almost always the alerts the claims
 * hand to this caller, so their Prometheus queries need not wait for the claim's round trip. The
 * claims still decide alone: the early result is used only when the alerts to send are exactly the
 * alerts it enriched (the same objects, in the same order: the same input the enrich stage would get);
 * otherwise those alerts are enriched again and the early result is dropped. Enrichment only reads
 * (Prometheus), so a claim lost to a racing post costs queries, never a message or a record.
 */
import type { Alert } from '../alertmanager/schema.js';
import type { Enrichment } from '../enrich/types.js';
import type { DedupeStore, Seen } from '../store/dedupe.js';

type Enrich = (alerts: Alert[]) => Promise<Map<string, Enrichment>>;

/** An enrichment begun before the claims returned: of which alerts, and its result. */
export interface EarlyEnrichment {
  readonly alerts: readonly Alert[];
  readonly result: Promise<Map<string, Enrichment>>;
}

/**
 * Starts enriching the likely new firings of a group, if any.
 * @param seen per alert, what the batched read saw (`undefined`: not read; such an alert is not started early)
 * @param routed per alert, the channels its route selects (an alert routed nowhere is never sent)
 * @param prepare what the enrich stage is given for an alert (the pipeline's cut copy, the same object each call)
 * @param enrich the enrich stage; it must never throw (`shared/enrich`: unavailable, not an error)
 */
export function startEarly(
  alerts: readonly Alert[],
  read: { seen: readonly (Seen | undefined)[]; routed: readonly string[][]; nowMs: number },
  store: Pick<DedupeStore, 'unseen'>,
  prepare: (alert: Alert) => Alert,
  enrich: Enrich,
): EarlyEnrichment | undefined {
  if (!store.unseen) return undefined;
  const likely = alerts.filter((alert, i) => {
    const seen = read.seen[i];
    return seen !== undefined && read.routed[i]!.length > 0 && store.unseen!(alert, seen, read.nowMs);
  });
  if (likely.length === 0) return undefined;
  const prepared = likely.map(prepare);
  return { alerts: prepared, result: enrich(prepared) };
}

/**
 * The enrichments of `alerts` (the group's alerts to send): the early result when it enriched exactly
 * these, else a new enrichment. Either way the early one is awaited: nothing it does outlives the request.
 */
export async function enrichmentOf(alerts: Alert[], early: EarlyEnrichment | undefined, enrich: Enrich): Promise<Map<string, Enrichment>> {
  if (early && early.alerts.length === alerts.length && early.alerts.every((a, i) => a === alerts[i])) return early.result;
  const [fresh] = await Promise.all([alerts.length ? enrich(alerts) : new Map<string, Enrichment>(), early?.result]);
  return fresh;
}
