/**
 * Alert storms in the pipeline: only alerts a channel will show in detail are enriched. A channel
 * receiving more than {@link MAX_DETAILED_ALERTS} alerts sends a digest, which shows no fresh
 * values, so querying Prometheus for thousands of alerts (when it is likely stressed itself)
 * would only cost time the delivery budget needs.
 */
import type { Alert } from '../alertmanager/schema.js';
import { MAX_DETAILED_ALERTS } from '../render/digest.js';

/**
 * The alerts worth enriching: those going to at least one channel that receives at most
 * {@link MAX_DETAILED_ALERTS} alerts (counting those Alertmanager truncated).
 * @param toSend each new alert with the channels it is pending for
 */
export function alertsToEnrich(toSend: { alert: Alert; claim: { pending: string[] } }[], truncatedAlerts: number): Alert[] {
  const perChannel = new Map<string, number>();
  for (const c of toSend) for (const name of c.claim.pending) perChannel.set(name, (perChannel.get(name) ?? 0) + 1);
  const detailed = (name: string) => (perChannel.get(name) ?? 0) + truncatedAlerts <= MAX_DETAILED_ALERTS;
  return toSend.filter((c) => c.claim.pending.some(detailed)).map((c) => c.alert);
}
