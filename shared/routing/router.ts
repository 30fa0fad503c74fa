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
}

/** Maps an alert's labels to the channel instance names it goes to (no duplicates, route order). */
export type RouteFn = (labels: Record<string, string>) => string[];

/**
 * @param routes evaluated in order
 * @param defaultChannels used when no route matches
 */
export function createRouter(routes: Route[], defaultChannels: string[]): RouteFn {
  return (labels) => {
    const selected: string[] = [];
    let matched = false;
    for (const route of routes) {
      if (!matchesAll(route.matchers, labels)) continue;
      matched = true;
      for (const name of route.channels) if (!selected.includes(name)) selected.push(name);
      if (!route.continue) break;
    }
    return matched ? selected : [...defaultChannels];
  };
}
