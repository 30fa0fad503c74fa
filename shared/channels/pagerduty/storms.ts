/**
 * The events of one notification when the channel keeps its storms (`shared/store/pagerduty-storms.ts`).
 * A storm is one PagerDuty alert (`group/<hash>`, `render.ts`) for many of ours; PagerDuty knows only
 * that key, never the alerts' own. So, per alert, the storm it was announced in is recorded (its member
 * id in the storm's item, written before the `trigger` is sent), and its follow-ups go to that key:
 * - resolve: the alert is marked resolved in its storm; the storm's `resolve` goes out when its last
 *   member resolves, however Alertmanager batches the resolves (some resolved while others still fire,
 *   none storm-sized, under the group key the storm was announced under or another one after a regroup);
 * - acknowledge: ONE `acknowledge` for the storm's key, whichever and however many of its alerts were
 *   acknowledged (one on the page, or the whole set), never one per alert under keys PagerDuty never saw.
 * - escalation: nothing for a storm's member (PagerDuty holds the storm's alert and escalates it by its policy).
 * An alert that is no storm's member is rendered as before (`renderPagerDuty`): its own key, or, in a
 * storm-sized notification, the group's. The storm of an alert is looked up under the group key its
 * record was announced under (`Notification.threadKeys`), else the notification's.
 *
 * Every store write is idempotent and comes before its event: a retried attempt plans the same events,
 * and a crash after a write but before the event only leaves the event to the retry.
 */
import type { EnrichedAlert } from '../../enrich/types.js';
import { isStorm } from '../../render/digest.js';
import type { Notification } from '../../render/notification.js';
import { type PagerDutyStormStore, type StoredStorm, stormMemberId } from '../../store/pagerduty-storms.js';
import { alertDedupKey, groupDedupKey } from './dedup-key.js';
import { PAGERDUTY_DIGEST_ABOVE, renderPagerDuty, type RenderedEvent } from './render.js';

export interface StormPlanContext {
  /** The channel instance's storms; unset: no storm is remembered (events as `renderPagerDuty` makes them). */
  store?: PagerDutyStormStore;
  /** The channel instance's name (storms are kept per instance: one PagerDuty service each). */
  channel: string;
  /** Storm threshold (`render.ts`). */
  digestAbove?: number;
  /** Epoch milliseconds. */
  now(): number;
}

/**
 * The events to send for `notification`, storms' alerts following their storm (see the file header).
 * Also what a caller that paces PagerDuty events for a large acknowledged set sends: the storm keys' events
 * are in it once each.
 * @returns the events in the order to send them: a storm's `trigger` first, per-alert events, storms'
 *   `resolve`s and `acknowledge`s last
 * @throws the store's error (the delivery is then retried)
 */
export async function planPagerDutyEvents(notification: Notification, ctx: StormPlanContext): Promise<RenderedEvent[]> {
  const { store } = ctx;
  const kind = notification.kind ?? 'alert';
  if (!store) return renderPagerDuty(notification, ctx);
  const memberOf = (a: EnrichedAlert) =>
    stormMemberId(alertDedupKey(a, notification.generations?.[a.fingerprint] ?? 0));
  const keyOf = (a: EnrichedAlert) => groupDedupKey(notification.threadKeys?.[a.fingerprint] ?? notification.groupKey);
  const storms = await stormsOf(notification, keyOf, ctx);
  const inStorm = (a: EnrichedAlert) => storms.get(keyOf(a))?.members.has(memberOf(a)) === true;
  const rest = notification.alerts.filter((a) => !inStorm(a));
  if (kind === 'escalation') return renderPagerDuty({ ...notification, alerts: rest }, ctx);
  const events = rest.length ? await othersEvents(notification, rest, { storms, memberOf }, ctx) : [];
  const members = notification.alerts.filter(inStorm);
  if (kind === 'acknowledged') {
    const open = [...new Set(members.map(keyOf))].filter((key) => !storms.get(key)?.closedAt);
    return [...events, ...open.map((dedup_key): RenderedEvent => ({ event_action: 'acknowledge', dedup_key }))];
  }
  return [
    ...events,
    ...(await stormResolves(
      members.filter((a) => a.status === 'resolved'),
      { keyOf, memberOf },
      ctx,
    )),
  ];
}

/**
 * The events of the alerts no storm knows: a storm-sized notification that brings firing alerts opens (or
 * grows) the group's storm, its alerts recorded before its trigger; resolves of a group whose storm is
 * known go out per alert (the storm itself resolves only with its last member); anything else as before.
 */
async function othersEvents(
  notification: Notification,
  rest: EnrichedAlert[],
  known: { storms: Map<string, StoredStorm | undefined>; memberOf: (a: EnrichedAlert) => string },
  ctx: StormPlanContext,
): Promise<RenderedEvent[]> {
  const kind = notification.kind ?? 'alert';
  const storming = kind === 'alert' && isStorm(notification, ctx.digestAbove ?? PAGERDUTY_DIGEST_ABOVE);
  const firing = rest.filter((a) => a.status === 'firing');
  const groupKey = groupDedupKey(notification.groupKey);
  if (storming && firing.length) {
    await ctx.store!.open(ctx.channel, groupKey, firing.map(known.memberOf), ctx.now());
    return renderPagerDuty(notification, ctx);
  }
  const own = { ...notification, alerts: rest };
  return renderPagerDuty(own, known.storms.get(groupKey) ? { digestAbove: Number.POSITIVE_INFINITY } : ctx);
}

/** The stored storms of the keys the notification's alerts may belong to, by `dedup_key`. */
async function stormsOf(
  notification: Notification,
  keyOf: (a: EnrichedAlert) => string,
  ctx: StormPlanContext,
): Promise<Map<string, StoredStorm | undefined>> {
  // Only resolves, acknowledgements and escalations follow a storm: a message of firing alerts reads nothing.
  const following =
    notification.kind === 'acknowledged' ||
    notification.kind === 'escalation' ||
    notification.alerts.some((a) => a.status === 'resolved');
  if (!following) return new Map();
  const keys = [...new Set(notification.alerts.map(keyOf))];
  const found = await Promise.all(keys.map((key) => ctx.store!.get(ctx.channel, key, ctx.now())));
  return new Map(keys.map((key, i) => [key, found[i]]));
}

/** Marks the resolved members in their storms; a `resolve` for each storm whose last member this resolved. */
async function stormResolves(
  resolved: EnrichedAlert[],
  by: { keyOf: (a: EnrichedAlert) => string; memberOf: (a: EnrichedAlert) => string },
  ctx: StormPlanContext,
): Promise<RenderedEvent[]> {
  const byStorm = new Map<string, string[]>();
  for (const a of resolved) byStorm.set(by.keyOf(a), [...(byStorm.get(by.keyOf(a)) ?? []), by.memberOf(a)]);
  const events: RenderedEvent[] = [];
  for (const [dedup_key, ids] of byStorm) {
    if (await ctx.store!.resolve(ctx.channel, dedup_key, ids, ctx.now()))
      events.push({ event_action: 'resolve', dedup_key });
  }
  return events;
}
