/**
 * The deliver stage: one message per channel, each with the alerts that channel still lacks
 * (`fanOutTo`), counted (`notifications_total`, `delivery_duration_seconds`) and logged
 * (`channel delivered`, `channel failed`, `channel refused content`).
 */
import type { Alert } from '../alertmanager/schema.js';
import type { EnrichedAlert } from '../enrich/types.js';
import { ContentRefusedError, deliveryFailureReason, type Channel } from '../channels/channel.js';
import { DEFAULT_DELIVERY_BUDGET_MS, deliver } from '../channels/deliver.js';
import { withChartUrl } from '../chart/url.js';
import { noMetrics, type Metrics } from '../metrics/catalogue.js';
import { MAX_DETAILED_ALERTS } from '../render/digest.js';
import { buildNotification } from '../render/notification.js';
import type { ChannelOutcome, ClaimedAlert, GroupContext } from './context.js';
import { markFlapping } from './flap.js';
import { markGenerations } from './refire.js';

/** Alerts named in one error log line. */
const MAX_NAMED = 20;

/**
 * The deliver stage for one channel: the group's alerts this channel still lacks, as one notification
 * (flap and generation marks, its own Acknowledge link), sent with retries inside what is left of the
 * group's budget; its success goes to the ledger at once. Never throws: a failure is the outcome.
 * @returns no outcome when the channel had nothing to send
 */
export async function fanOutTo(channel: Channel, group: GroupContext): Promise<{ channel: string; outcome?: ChannelOutcome }> {
  const { message, deps, log, ackView } = group;
  const mine = group.toSend.filter((c) => c.claim.pending.includes(channel.name));
  if (mine.length === 0) return { channel: channel.name };
  const started = deps.now();
  // Charts only for a message that shows its alerts in detail: a storm's digest shows none, and
  // signing thousands of URLs would only cost the storm's time budget.
  const detailed = mine.length + message.truncatedAlerts <= MAX_DETAILED_ALERTS;
  const alerts = mine.map((c) => enriched(c, detailed, group, started));
  try {
    const built = { ...buildNotification(message, alerts), ...(deps.grafanaUrl && { grafanaUrl: deps.grafanaUrl }) };
    const notification = markGenerations(markFlapping(built, group.flapping), mine);
    const decorated = deps.ack && ackView ? await deps.ack.decorate(notification, channel.name, ackView) : notification;
    const budgetMs = Math.max(deps.delivery.timeoutMs, (deps.delivery.budgetMs ?? DEFAULT_DELIVERY_BUDGET_MS) - (started - group.receivedAt));
    const attempts = await deliver(channel, decorated, { ...deps.delivery, budgetMs, logger: log });
    group.ledger.delivered(
      mine.filter((c) => !c.unledgered),
      channel.name,
    );
    const outcome: ChannelOutcome = { status: 'delivered', alerts: mine.length, attempts, durationMs: deps.now() - started };
    log.info('channel delivered', { channel: channel.name, ...outcome });
    countDelivery(channel.name, outcome, 'ok', deps.metrics ?? noMetrics);
    return { channel: channel.name, outcome };
  } catch (err) {
    const refused = err instanceof ContentRefusedError;
    const outcome: ChannelOutcome = { status: refused ? 'refused' : 'failed', alerts: mine.length, error: (err as Error).message, durationMs: deps.now() - started };
    if (refused) log.error('channel refused content', { channel: channel.name, ...outcome, ...named(mine.map((c) => c.alert)) });
    else log.error('channel failed', { channel: channel.name, ...outcome });
    countDelivery(channel.name, outcome, deliveryFailureReason(err), deps.metrics ?? noMetrics);
    return { channel: channel.name, outcome };
  }
}

/** Each claimed alert as messages show it, by whether it is shown in detail: built once per group, not per channel. */
const shown = new WeakMap<ClaimedAlert, Partial<Record<'detailed' | 'listed', EnrichedAlert>>>();

/**
 * The alert with its enrichment and, shown in detail, its signed chart URL (signed at `nowMs`). The
 * group's channels share it: the chart token's HMAC and the copy are made once per alert, not per channel.
 */
function enriched(c: ClaimedAlert, detailed: boolean, group: GroupContext, nowMs: number): EnrichedAlert {
  const built = shown.get(c) ?? {};
  shown.set(c, built);
  const key = detailed ? 'detailed' : 'listed';
  const known = built[key];
  if (known) return known;
  const enrichment = group.enrichments.get(c.alert.fingerprint);
  const alert = { ...c.alert, enrichment: enrichment ?? { status: 'unavailable' as const, kind: 'unknown' as const, reason: 'not enriched' } };
  built[key] = withChartUrl(alert, detailed && enrichment !== undefined, group.deps.charts, nowMs);
  return built[key];
}

/** The alerts an error log names: fingerprints and alert names, the first {@link MAX_NAMED} of each. */
function named(alerts: Alert[]): { fingerprints: string[]; alertnames: string[] } {
  return { fingerprints: alerts.slice(0, MAX_NAMED).map((a) => a.fingerprint), alertnames: [...new Set(alerts.map((a) => a.labels.alertname ?? ''))].slice(0, MAX_NAMED) };
}

function countDelivery(channel: string, outcome: ChannelOutcome, reason: string, metrics: Metrics): void {
  // A refused message failed too: `outcome` is delivered or failed, the reason says which failure.
  metrics.inc('notifications_total', { channel, outcome: outcome.status === 'delivered' ? 'delivered' : 'failed', reason });
  metrics.observe('delivery_duration_seconds', { channel }, outcome.durationMs / 1000);
}
