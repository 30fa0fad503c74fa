/**
 * Alert storms in the pipeline. A storm is enriched like any group (enrichment costs a number of
 * queries per kind, not per alert), so the only storm decision left here is whether to say so in
 * the log: a channel receiving more than {@link MAX_DETAILED_ALERTS} alerts sends a digest whatever
 * its `digestAbove`.
 */
import { MAX_DETAILED_ALERTS } from '../render/digest.js';

/**
 * Whether every channel will digest this group: each receives more than {@link MAX_DETAILED_ALERTS}
 * alerts (counting those Alertmanager truncated).
 * @param toSend each new alert with the channels it is pending for
 */
export function stormSized(toSend: { claim: { pending: string[] } }[], truncatedAlerts: number): boolean {
  const perChannel = new Map<string, number>();
  for (const c of toSend) for (const name of c.claim.pending) perChannel.set(name, (perChannel.get(name) ?? 0) + 1);
  return perChannel.size > 0 && [...perChannel.values()].every((n) => n + truncatedAlerts > MAX_DETAILED_ALERTS);
}
