/**
 * The traffic whose cost `bench/floor-cost.ts` prices, as Alertmanager sends it: each notification posted twice
 * (two HA peers, one after the other as their peer time-out spaces them), resends at `repeat_interval`, resolves.
 * Each scenario is a list of webhook bodies, posted in order.
 */
import type { WebhookMessage } from '../shared/alertmanager/schema.js';
import { newGroup } from './floor-processes.js';

export interface Scenario {
  name: string;
  /** What it stands for, in a few words. */
  description: string;
  bodies: string[];
  /** Alerts in all the bodies (what the cost is per). */
  alerts: number;
}

/** HA peers posting each notification. */
const PEERS = 2;
/** `repeat_interval` resends of a firing group before it resolves (a 4 h repeat interval, firing 16 h). */
const RESENDS = 4;
const MINUTE_MS = 60_000;

const twice = (body: string) => Array<string>(PEERS).fill(body);
const alertsIn = (bodies: string[]) => bodies.reduce((n, b) => n + (JSON.parse(b) as WebhookMessage).alerts.length, 0);

/** The same body with every alert resolved at `endsAt`. */
function resolved(body: string, endsAt: string): string {
  const message = JSON.parse(body) as WebhookMessage;
  message.status = 'resolved';
  for (const alert of message.alerts) Object.assign(alert, { status: 'resolved', endsAt });
  return JSON.stringify(message);
}

/** The same body with every alert's `startsAt` set (a new occurrence of the same alerts). */
function startingAt(body: string, startsAt: string): string {
  const message = JSON.parse(body) as WebhookMessage;
  for (const alert of message.alerts) alert.startsAt = startsAt;
  return JSON.stringify(message);
}

/**
 * Steady state: `groups` groups of 10 alerts, each announced, resent `RESENDS` times and resolved, every post from
 * both HA peers: 2 new events (firing, resolved) of 12 posts per alert, the rest duplicates.
 */
export function steadyState(groups = 10): Scenario {
  const bodies: string[] = [];
  for (let g = 0; g < groups; g++) {
    const firing = newGroup(10);
    bodies.push(...twice(firing));
    for (let r = 0; r < RESENDS; r++) bodies.push(...twice(firing));
    bodies.push(...twice(resolved(firing, new Date().toISOString())));
  }
  return {
    name: 'steady state',
    description: `${groups} groups of 10: announced, ${RESENDS} resends, resolved; 2 HA peers`,
    bodies,
    alerts: alertsIn(bodies),
  };
}

/** A flapping alert: `cycles` firings of one alert, 2 minutes apart, each resolved after one; 2 HA peers. */
export function flapping(cycles = 25): Scenario {
  const first = newGroup(1);
  const t0 = Date.now() - (cycles * 2 + 1) * MINUTE_MS;
  const bodies: string[] = [];
  for (let c = 0; c < cycles; c++) {
    const startsAt = t0 + c * 2 * MINUTE_MS;
    const firing = startingAt(first, new Date(startsAt).toISOString());
    bodies.push(...twice(firing), ...twice(resolved(firing, new Date(startsAt + MINUTE_MS).toISOString())));
  }
  return {
    name: 'flapping alert',
    description: `1 alert firing and resolving ${cycles} times, 2 min apart; 2 HA peers`,
    bodies,
    alerts: alertsIn(bodies),
  };
}

/** A storm: one group of `alerts` new alerts (and `truncated` Alertmanager left out), from both HA peers. */
export function storm(alerts = 5000, truncated = 1497): Scenario {
  const bodies = twice(newGroup(alerts, truncated));
  return {
    name: `${alerts}-alert storm`,
    description: `1 group of ${alerts} new alerts (+ ${truncated} truncated); 2 HA peers`,
    bodies,
    alerts: alertsIn(bodies),
  };
}
