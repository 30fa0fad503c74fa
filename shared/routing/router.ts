/**
 * Which channel instances an alert goes to: the first route whose matchers all hold wins; a route
 * with `continue: true` lets the following routes match too (their channels are added); when no
 * route matches, the default route's channels. The same rule as Alertmanager's routing tree, one
 * level deep.
 * @see https://prometheus.io/docs/alerting/latest/configuration/#route
 */
import { matchesAll, type Matcher } from '../alertmanager/matchers/match.js';

export interface Route {
  /** All must hold; an empty list matches every alert. */
  matchers: Matcher[];
  /** Channel instance names, in order. */
  channels: string[];
  /** Keep evaluating the following routes after this one matched. */
  continue: boolean;
  /** Who this route's channels @-mention for the alerts it matched (`shared/channels/mentions.ts`). */
  mention?: string[];
}

/** Maps an alert's labels to the channel instance names it goes to (no duplicates, route order). */
export type RouteFn = (labels: Record<string, string>) => string[];

/** The `mention` entries the routes that match an alert's labels give one channel instance (route order, no repeats). */
export type MentionFn = (labels: Record<string, string>, channel: string) => string[];

/** The routes an alert's labels match: the first that holds, and the following ones while `continue` says so. */
function matching(routes: Route[], labels: Record<string, string>): Route[] {
  const matched: Route[] = [];
  for (const route of routes) {
    if (!matchesAll(route.matchers, labels)) continue;
    matched.push(route);
    if (!route.continue) break;
  }
  return matched;
}

/**
 * @param routes evaluated in order
 * @param defaultChannels used when no route matches
 */
export function createRouter(routes: Route[], defaultChannels: string[]): RouteFn {
  return (labels) => {
    const matched = matching(routes, labels);
    if (matched.length === 0) return [...defaultChannels];
    const selected: string[] = [];
    for (const route of matched) for (const name of route.channels) if (!selected.includes(name)) selected.push(name);
    return selected;
  };
}

/** @returns `undefined` when no route has a `mention` (nothing to look up per alert) */
export function createMentionRouter(routes: Route[]): MentionFn | undefined {
  if (!routes.some((r) => r.mention?.length)) return undefined;
  return (labels, channel) => {
    const entries = matching(routes, labels).flatMap((r) => (r.channels.includes(channel) ? (r.mention ?? []) : []));
    return [...new Set(entries)];
  };
}
