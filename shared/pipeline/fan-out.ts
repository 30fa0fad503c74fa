/**
 * The fan-out stage: one message per channel, all channels at once, each with the alerts that channel
 * still lacks, sent with retries inside what is left of the group's budget (`deliver`); each channel's
 * success goes to the delivery ledger at once. Counted (`notifications_total`, `delivery_duration_seconds`)
 * and logged (`channel delivered`, `channel failed`, `channel refused content`).
 */
import type { Locale } from '../core/locale.js';
import type { Alert } from '../alertmanager/schema.js';
import { ContentRefusedError, DeliveryError, deliveryFailureReason, type Channel } from '../channels/channel.js';
import { DEFAULT_DELIVERY_BUDGET_MS, deliver } from '../channels/deliver.js';
import { withChartUrl } from '../chart/url.js';
import type { EnrichedAlert } from '../enrich/types.js';
import { noMetrics } from '../metrics/catalogue.js';
import { MAX_DETAILED_ALERTS } from '../render/digest.js';
import { buildNotification, type Notification } from '../render/notification.js';
import type { ChannelOutcome, ClaimedAlert, GroupContext } from './context.js';
import { markFlapping } from './flap.js';
import { markGenerations } from './refire.js';
import type { MentionFn } from '../routing/router.js';

/** Alerts named in one error log line. */
const MAX_NAMED = 20;

/** Sends to every channel (`group.outcomes`); never throws: a failure is the channel's outcome. */
export async function fanOut(group: GroupContext): Promise<void> {
  group.outcomes = await Promise.all(
    group.deps.channels.map(async (channel) => ({ channel: channel.name, outcome: await sendTo(group, channel) })),
  );
}

/**
 * One channel: the group's alerts this channel still lacks, as one notification (flap and generation
 * marks, its own Acknowledge link).
 * @returns no outcome when the channel had nothing to send
 */
async function sendTo(group: GroupContext, channel: Channel): Promise<ChannelOutcome | undefined> {
  const { deps, log } = group;
  const mine = group.toSend.filter((c) => c.claim.pending.includes(channel.name));
  if (mine.length === 0) return undefined;
  const started = deps.now();
  try {
    const notification = await notificationFor(group, channel, mine, started);
    const budgetMs = Math.max(
      deps.delivery.timeoutMs,
      (deps.delivery.budgetMs ?? DEFAULT_DELIVERY_BUDGET_MS) - (started - group.receivedAt),
    );
    const clock = deps.sleep && { now: deps.now, sleep: deps.sleep };
    const attempts = await deliver(channel, notification, { ...deps.delivery, budgetMs, logger: log, clock });
    group.ledger.delivered(
      mine.filter((c) => !c.unledgered),
      channel.name,
    );
    const outcome = { status: 'delivered' as const, alerts: mine.length, attempts, durationMs: deps.now() - started };
    log.info('channel delivered', { channel: channel.name, ...outcome });
    count(group, channel.name, outcome, 'ok');
    return outcome;
  } catch (err) {
    const refused = err instanceof ContentRefusedError;
    const outcome: ChannelOutcome = {
      status: refused ? 'refused' : 'failed',
      alerts: mine.length,
      error: (err as Error).message,
      durationMs: deps.now() - started,
      ...(err instanceof DeliveryError && err.outcomeUnknown && { mayHaveBeenDelivered: true as const }),
    };
    if (refused)
      log.error('channel refused content', { channel: channel.name, ...outcome, ...named(mine.map((c) => c.alert)) });
    else log.error('channel failed', { channel: channel.name, ...outcome });
    count(group, channel.name, outcome, deliveryFailureReason(err));
    return outcome;
  }
}

/** The channel's notification: its alerts, marked flapping and by generation, with its own Acknowledge link. */
async function notificationFor(
  group: GroupContext,
  channel: Channel,
  mine: ClaimedAlert[],
  nowMs: number,
): Promise<Notification> {
  const { message, deps, ackView } = group;
  // Charts only for a message that shows its alerts in detail: a storm's digest shows none, and
  // signing thousands of URLs would only cost the storm's time budget.
  const detailed = mine.length + message.truncatedAlerts <= MAX_DETAILED_ALERTS;
  const alerts = mine.map((c) => shown(group, c, { detailed, locale: channel.locale }, nowMs));
  const mentions = routeMentions(mine, channel.name, deps.mentions);
  const built = {
    ...buildNotification(message, alerts),
    ...(deps.grafanaUrl && { grafanaUrl: deps.grafanaUrl }),
    ...(mentions.length && { mentions }),
  };
  const notification = markGenerations(markFlapping(built, group.flapping), mine);
  return deps.ack && ackView ? deps.ack.decorate(notification, channel, ackView) : notification;
}

/** The `mention` entries the routes of the channel's firing alerts name for it (`shared/channels/mentions.ts`). */
function routeMentions(mine: ClaimedAlert[], channel: string, mentions: MentionFn | undefined): string[] {
  if (!mentions) return [];
  const firing = mine.filter((c) => c.alert.status === 'firing');
  return [...new Set(firing.flatMap((c) => mentions(c.alert.labels, channel)))];
}

/**
 * The alert with its enrichment and, shown in detail, its signed chart URL (signed at `nowMs`; its words
 * and title in the channel's language). The group's channels share it (`group.shown`): the chart token's
 * HMAC and the copy are made once per alert and language.
 */
function shown(
  group: GroupContext,
  c: ClaimedAlert,
  { detailed, locale = 'en' }: { detailed: boolean; locale?: Locale },
  nowMs: number,
): EnrichedAlert {
  const built = group.shown.get(c) ?? {};
  group.shown.set(c, built);
  const key = detailed ? (`detailed ${locale}` as const) : 'listed';
  const known = built[key];
  if (known) return known;
  const enrichment = group.enrichments.get(c.alert.fingerprint);
  const alert = {
    ...c.alert,
    enrichment: enrichment ?? {
      status: 'unavailable' as const,
      kind: 'unknown' as const,
      reason: 'not enriched',
      reasonZh: '未查询',
    },
  };
  const charts = group.deps.charts && { ...group.deps.charts, locale };
  built[key] = withChartUrl(alert, detailed && enrichment !== undefined, charts, nowMs);
  return built[key];
}

/** The alerts an error log names: fingerprints and alert names, the first {@link MAX_NAMED} of each. */
function named(alerts: Alert[]): { fingerprints: string[]; alertnames: string[] } {
  return {
    fingerprints: alerts.slice(0, MAX_NAMED).map((a) => a.fingerprint),
    alertnames: [...new Set(alerts.map((a) => a.labels.alertname ?? ''))].slice(0, MAX_NAMED),
  };
}

function count(group: GroupContext, channel: string, outcome: ChannelOutcome, reason: string): void {
  const metrics = group.deps.metrics ?? noMetrics;
  // A refused message failed too: `outcome` is delivered or failed, the reason says which failure.
  metrics.inc('notifications_total', {
    channel,
    outcome: outcome.status === 'delivered' ? 'delivered' : 'failed',
    reason,
  });
  metrics.observe('delivery_duration_seconds', { channel }, outcome.durationMs / 1000);
}
