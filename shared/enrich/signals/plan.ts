/**
 * A kind's reads planned once for all its alerts: the first alert of a shape issues every query its
 * signals need (each sent once, the group's query cache dedupes across kinds), and every alert of that
 * shape then waits on ONE promise of all the answers and computes its signals synchronously.
 *
 * Why: reading per alert and signal (a promise per signal, per time, per bucket query, each with its
 * closures and intermediate arrays) kept ~100,000 pending reads alive at once in a 5,000-alert storm:
 * about half of its enrichment CPU was the garbage collector scavenging them
 * (`npx tsx bench/enrich-storm.ts 5000`; README Performance, session 19). The answers are the same
 * objects either way: only the waiting is shared.
 */
import type { Alert } from '../../alertmanager/schema.js';
import type { Sample, Series } from '../../prometheus/client.js';
import type { EnrichContext } from '../enricher.js';

/** Step of the range query that reads values at several alerts' starts, seconds: finer is noise under a 5-minute rate. */
export const AT_START_STEP_SECONDS = 60;

/** How a peer list's samples at their alerts' starts are read: not at all, one instant query, or one range query. */
export type StartRead = { kind: 'none' } | { kind: 'instant'; answer: Promise<Sample[]> } | { kind: 'range'; answer: Promise<Series[]> };

const STARTS = new WeakMap<readonly Alert[], Map<number, number[]>>();
const MEMBERS = new WeakMap<readonly Alert[], Set<Alert>>();

/**
 * The read of `query` at the starts of `peers`: one instant query when they share one `startsAt` (the
 * usual case), one range query from the earliest to now when they do not, none when no start parses.
 */
export function readStarts(ctx: EnrichContext, query: string, peers: readonly Alert[]): StartRead {
  const nowMs = ctx.now.getTime();
  const starts = distinctStarts(peers, nowMs);
  if (starts.length === 0) return { kind: 'none' };
  if (starts.length === 1) return { kind: 'instant', answer: asked(ctx.instant(query, new Date(starts[0]!))) };
  return { kind: 'range', answer: asked(ctx.range(query, (nowMs - Math.min(...starts)) / 1000, AT_START_STEP_SECONDS)) };
}

/**
 * `read`, marked as handled: a plan asks its reads before it knows which alerts will wait on which
 * (an alert whose `startsAt` does not parse never waits on the start read), and a read nobody waits on
 * must not fail the process as an unhandled rejection. Whoever waits still gets the failure.
 */
export function asked<T>(read: Promise<T>): Promise<T> {
  read.catch(() => {});
  return read;
}

/** The alert's start, epoch ms capped at now; NaN when its `startsAt` does not parse. */
export const ownStart = (alert: Alert, nowMs: number): number => Math.min(Date.parse(alert.startsAt), nowMs);

/** The distinct `startsAt` of `peers` (epoch ms, capped at now), remembered for the peer list. */
export function distinctStarts(peers: readonly Alert[], nowMs: number): number[] {
  let byNow = STARTS.get(peers);
  if (!byNow) {
    byNow = new Map();
    STARTS.set(peers, byNow);
  }
  let starts = byNow.get(nowMs);
  if (!starts) {
    starts = [...new Set(peers.map((a) => ownStart(a, nowMs)).filter((t) => !Number.isNaN(t)))];
    byNow.set(nowMs, starts);
  }
  return starts;
}

/** Whether `alert` is one of `peers` (a set built once per list: `includes` per alert and signal is O(alerts²)). */
export function isPeer(alert: Alert, peers: readonly Alert[]): boolean {
  let set = MEMBERS.get(peers);
  if (!set) {
    set = new Set(peers);
    MEMBERS.set(peers, set);
  }
  return set.has(alert);
}

/** `map.get(key)`, made and stored by `make` when absent. */
export function memo<K extends object, V>(map: WeakMap<K, V>, key: K, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = make();
    map.set(key, value);
  }
  return value;
}
