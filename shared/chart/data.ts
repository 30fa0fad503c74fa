/**
 * What the chart draws, from a chart spec and the range query's answer read at GET time. Pure: no I/O.
 *
 * The window, decided here (see {@link chartWindow}): from a lead before the fire time (a third of the
 * time since, 15 min to 6 h, so the chart shows what came before) to the moment of the GET; for a memory
 * trend at least the window the enrichment fitted; never more than {@link MAX_SPAN_SECONDS}. The
 * `step` keeps every chart under {@link TARGET_POINTS} points and never finer than
 * {@link MIN_STEP_SECONDS} (a usual scrape interval: finer steps only repeat samples).
 */
import type { Locale } from '../core/locale.js';
import type { Point, Series } from '../prometheus/client.js';
import { rangeStep } from '../prometheus/step.js';
import { fitMemoryTrend, lastRestartIndex } from '../enrich/trend/index.js';
import { robustFit } from '../enrich/trend/theil-sen.js';
import type { MemoryTrend, SignalUnit } from '../enrich/types.js';
import type { ChartSpec, Threshold } from './spec.js';

/** Shortest lead before the fire time, seconds. */
export const MIN_LEAD_SECONDS = 15 * 60;
/** Longest lead before the fire time, seconds. */
export const MAX_LEAD_SECONDS = 6 * 3600;
/** Longest window charted, seconds (a week): a link opened late still asks Prometheus for a bounded range. */
export const MAX_SPAN_SECONDS = 7 * 24 * 3600;
/** Points per chart the step aims at (a 800-pixel-wide plot). */
export const TARGET_POINTS = 300;
/** Finest step, seconds. */
export const MIN_STEP_SECONDS = 15;

const HOUR = 3600;

/** The range query of a chart: epoch seconds and the step in seconds. */
export interface ChartWindow {
  start: number;
  end: number;
  step: number;
}

/** A memory trend as drawn: the fitted line over the fitted points, and its projection to capacity. */
export interface TrendLines {
  trend: MemoryTrend;
  /** The fitted line from the first to the last fitted point. */
  fit: [Point, Point];
  /** From the last fitted point along the fit to capacity, or to the chart's right edge when capacity is further. */
  projection?: [Point, Point];
}

/** Everything the renderer needs, all times epoch seconds. */
export interface ChartData {
  /** The language of the chart's own words (its link's, see `token.ts`); default `en`. */
  locale?: Locale;
  title: string;
  unit: SignalUnit;
  /** The x-axis: the window's start, and its end or the projection's end, whichever is later. */
  xMin: number;
  xMax: number;
  /** The moment of the GET (the window's end). */
  now: number;
  firedAt: number;
  /** The alert's series; non-finite values are gaps. Empty when Prometheus had no matching series. */
  points: Point[];
  threshold?: Threshold;
  /** The value when the alert fired (the first point at or after `firedAt`, within two steps) and the latest. */
  fired?: Point;
  latest?: Point;
  capacityMiB?: number | null;
  trend?: TrendLines;
  /**
   * The y-range that must be in view (the renderer rounds it out to nice ticks): the values, the
   * threshold and capacity, with a margin below and room above for the value labels; from 0 for
   * units with a natural zero (ratios, counts, rates) when nothing is negative, so a threshold never
   * sits on the x-axis.
   */
  yMin: number;
  yMax: number;
}

/** Units whose axis starts at 0 (when no value is negative): a share, a count or a rate reads from zero. */
const FROM_ZERO: ReadonlySet<SignalUnit> = new Set(['ratio', 'count', 'per_second']);
/** Margin below the lowest level, and room above the highest (for the value and "fired" labels), as shares of the span. */
const MARGIN_BELOW = 0.1;
const ROOM_ABOVE = 0.2;

/** See {@link ChartData.yMin}: the levels' range, widened; a flat range gets a span of a tenth of its level (or 1). */
function yRange(unit: SignalUnit, levels: readonly number[]): { yMin: number; yMax: number } {
  const finite = levels.filter(Number.isFinite);
  if (finite.length === 0) return { yMin: 0, yMax: 1 };
  const [lo, hi] = [Math.min(...finite), Math.max(...finite)];
  const fromZero = FROM_ZERO.has(unit) && lo >= 0;
  const bottom = fromZero ? 0 : lo;
  const span = hi - bottom || Math.abs(hi) / 10 || 1;
  return { yMin: fromZero ? 0 : lo - span * MARGIN_BELOW, yMax: hi + span * ROOM_ABOVE };
}

/**
 * The range to read for a chart opened at `nowS`: `end` is now, `end - start` a whole number of `step`s
 * (so the range query's last point is now).
 * @param nowS epoch seconds
 */
export function chartWindow(spec: ChartSpec, nowS: number): ChartWindow {
  const end = Math.floor(nowS);
  const lead = Math.min(MAX_LEAD_SECONDS, Math.max(MIN_LEAD_SECONDS, (end - spec.firedAt) / 3));
  let start = Math.floor(spec.firedAt - lead);
  if (spec.memory) start = Math.min(start, end - Math.ceil(spec.memory.windowSeconds));
  // A `startsAt` ahead of our clock (skew between Prometheus and us) would put the start after the
  // end: the window then still ends now and spans at least the shortest lead.
  start = Math.min(start, end - MIN_LEAD_SECONDS);
  start = Math.max(start, end - MAX_SPAN_SECONDS);
  const step = Math.max(MIN_STEP_SECONDS, rangeStep(end - start, TARGET_POINTS));
  // A range query evaluates at start, start + step, … up to end: a whole number of steps puts its last
  // point at now, not up to a step before it (which read "no data" for a series younger than the step).
  // One step earlier at most, so the alert's start and the memory window stay in; one fewer past the longest span.
  const steps = Math.ceil((end - start) / step);
  return { start: end - (steps * step > MAX_SPAN_SECONDS ? steps - 1 : steps) * step, end, step };
}

/**
 * The series that belongs to the alert: every label it shares with the alert has the alert's value;
 * labels the alert lacks are ignored (the query added them: the per-generation aggregation's
 * `engine_generation`, dcgm-exporter's `UUID`/`modelName`/driver labels; `__name__`, which rules drop).
 * Of several such series, the one sharing the most labels with the alert; `undefined` when none fits,
 * or when several fit without sharing any label (nothing tells which is the alert's).
 */
export function alertSeries(series: readonly Series[], labels: Readonly<Record<string, string>>): Series | undefined {
  let best: Series | undefined;
  let bestShared = -1;
  let tie = false;
  for (const s of series) {
    const shared = sharedLabels(s.metric, labels);
    if (shared === undefined || shared < bestShared) continue;
    tie = shared === bestShared;
    if (!tie) [best, bestShared] = [s, shared];
  }
  return tie && bestShared === 0 ? undefined : best;
}

/** How many labels `metric` shares with `labels`, or `undefined` when a shared label differs. */
function sharedLabels(
  metric: Readonly<Record<string, string>>,
  labels: Readonly<Record<string, string>>,
): number | undefined {
  let shared = 0;
  for (const [name, value] of Object.entries(metric)) {
    if (name === '__name__' || labels[name] === undefined) continue;
    if (labels[name] !== value) return undefined;
    shared++;
  }
  return shared;
}

/**
 * The chart's data.
 * @param series the range query's answer over `window`
 */
export function chartData(spec: ChartSpec, series: readonly Series[], window: ChartWindow): ChartData {
  const points = alertSeries(series, spec.labels)?.points ?? [];
  const finite = points.filter((p) => Number.isFinite(p.value));
  const fired = finite.find((p) => p.time >= spec.firedAt && p.time <= spec.firedAt + 2 * window.step);
  const latest = finite.at(-1);
  const trend = spec.memory ? trendLines(finite, spec.memory.capacityMiB, window) : undefined;
  const projectionEnd = trend?.projection?.[1].time ?? window.end;
  return {
    title: spec.title,
    unit: spec.unit,
    xMin: window.start,
    xMax: Math.max(window.end, projectionEnd),
    now: window.end,
    firedAt: spec.firedAt,
    points,
    ...(spec.threshold && { threshold: spec.threshold }),
    ...(fired && { fired }),
    ...(latest && { latest }),
    ...(spec.memory && { capacityMiB: spec.memory.capacityMiB }),
    ...(trend && { trend }),
    ...yRange(spec.unit, [
      ...finite.map((p) => p.value),
      ...(spec.threshold ? [spec.threshold.value] : []),
      ...(spec.memory?.capacityMiB != null ? [spec.memory.capacityMiB] : []),
      ...(trend?.projection ? [trend.projection[1].value] : []),
    ]),
  };
}

/**
 * The memory trend of the charted points, as the enrichment fits it (`fitMemoryTrend`: restart
 * detection, Theil–Sen), with its line; the projection only when the trend is real (`growing`) and
 * capacity known, drawn at most as far right again as the window is long.
 */
function trendLines(finite: Point[], capacityMiB: number | null, window: ChartWindow): TrendLines | undefined {
  const trend = fitMemoryTrend(finite, capacityMiB);
  if (!trend) return undefined;
  const segment = finite.slice(lastRestartIndex(finite));
  if (segment.length < 2) return undefined;
  const first = segment[0]!;
  const line = robustFit(
    segment.map((p) => (p.time - first.time) / HOUR),
    segment.map((p) => p.value),
  );
  const at = (time: number): Point => ({ time, value: line.intercept + line.slope * ((time - first.time) / HOUR) });
  const last = segment.at(-1)!;
  const fit: [Point, Point] = [at(first.time), at(last.time)];
  if (!trend.growing || capacityMiB === null || !(line.slope > 0)) return { trend, fit };
  const fullAt = last.time + Math.max(0, ((capacityMiB - fit[1].value) / line.slope) * HOUR);
  const edge = window.end + (window.end - window.start);
  const projection: [Point, Point] = [fit[1], fullAt <= edge ? { time: fullAt, value: capacityMiB } : at(edge)];
  return { trend, fit, projection };
}
