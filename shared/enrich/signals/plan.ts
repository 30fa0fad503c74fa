/**
 * Values when the alerts fired (one instant or range query per peer list), and what a kind's plans
 * share. A kind's reads are planned once for all its alerts: the first alert of a shape issues every query its
 * signals need (each sent once, the group's query cache dedupes across kinds), and every alert of that
 * shape then waits on ONE promise of all the answers and computes its signals synchronously.
 *
 * Why: reading per alert and signal (a promise per signal, per time, per bucket query, each with its
 * closures and intermediate arrays) kept ~100,000 pending reads alive at once in a 5,000-alert storm:
 * about half of its enrichment CPU was the garbage collector scavenging them
 * (`npx tsx bench/enrich-storm.ts 5000`). With the plans (and the
 * cheaper per-alert work in read.ts) one such enrichment went from 2.4 s of CPU and ~510 MB allocated
 * to 0.9 s and ~230 MB (empty answers; median of 5). The answers are the same objects either way:
 * only the waiting is shared.
 */
import { hasKnownStart, type Alert } from '../../alertmanager/schema.js';
import type { Sample, Series } from '../../prometheus/client.js';
import type { EnrichContext } from '../enricher.js';

/** Step of the range query that reads values at several alerts' starts, seconds: finer is noise under a 5-minute rate. */
export const AT_START_STEP_SECONDS = 60;

/** How a peer list's samples at their alerts' starts are read: not at all, one instant query, or one range query. */
export type StartRead =
  | { kind: 'none' }
  | { kind: 'instant'; answer: Promise<Sample[]> }
  | { kind: 'range'; answer: Promise<Series[]> };

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
  return {
    kind: 'range',
    answer: asked(ctx.range(query, (nowMs - Math.min(...starts)) / 1000, AT_START_STEP_SECONDS)),
  };
}

/**
 * The query's samples when the alert fired. Peers sharing one `startsAt` (the usual case): an
 * instant query at it. Several: one range query from the earliest `startsAt` to now, each alert
 * taking the point {@link pointAt} its own `startsAt`.
 * @returns `undefined` when the alert's `startsAt` does not parse
 */
export async function samplesAtStart(
  ctx: EnrichContext,
  query: string,
  alert: Alert,
  peers: readonly Alert[],
): Promise<Sample[] | undefined> {
  const own = ownStart(alert, ctx.now.getTime());
  if (Number.isNaN(own)) return undefined;
  const read = readStarts(ctx, query, isPeer(alert, peers) ? peers : [...peers, alert]);
  if (read.kind === 'none') return undefined;
  const answer = await read.answer;
  if (read.kind === 'instant') return answer as Sample[];
  return (answer as Series[]).flatMap(({ metric, points }) => {
    const point = pointAt(points, own / 1000);
    return point ? [{ metric, ...point }] : [];
  });
}

/** Prometheus's default lookback for an instant query, seconds: a range point older than this is not "at" a time. */
const LOOKBACK_SECONDS = 300;

/**
 * The range point that stands for time `at` (epoch seconds): the first at or after it within one
 * step, else the last before it within the lookback; `undefined` when the series has none near `at`
 * (it appeared later or ended earlier), so a value from hours away is never shown as "when fired".
 */
export function pointAt<P extends { time: number }>(points: readonly P[], at: number): P | undefined {
  const step = Math.max(AT_START_STEP_SECONDS, points.length > 1 ? points[1]!.time - points[0]!.time : 0);
  const after = points.find((p) => p.time >= at);
  if (after && after.time - at <= step) return after;
  const before = points.filter((p) => p.time < at).at(-1);
  return before && at - before.time <= LOOKBACK_SECONDS ? before : undefined;
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

/**
 * The alert's start, epoch ms capped at now; NaN when its `startsAt` does not parse or is unknown (Go's
 * zero time, `hasKnownStart`: year 1 would make its peers' "when fired" read a range from year 1).
 */
export const ownStart = (alert: Alert, nowMs: number): number =>
  hasKnownStart(alert) ? Math.min(Date.parse(alert.startsAt), nowMs) : Number.NaN;

/** The distinct `startsAt` of `peers` (epoch ms, capped at now), remembered for the peer list. */
function distinctStarts(peers: readonly Alert[], nowMs: number): number[] {
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
