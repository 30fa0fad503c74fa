/**
 * Enricher for target-down alerts (`up == 0`: Prometheus cannot scrape the server). The server's own
 * metrics stop with the scrape, so its error and load signals would all read "no data"; what helps
 * is how long it has been down, whether the other targets of its job still answer (one down: the
 * server; all down: the scrape path, network or discovery) and whether its host's GPUs still report
 * to DCGM and with which XID error (79: fallen off the bus).
 * Signals with no series are left out: a missing series is not evidence, and a wall of "no data"
 * hides the lines that are.
 */
import { aggregate, selector } from '../../prometheus/promql.js';
import type { Enricher, SignalDef } from '../enricher.js';
import { GPU_XID, GPUS_REPORTING, readGpuSignals, type GpuSignalDef } from '../signals/dcgm.js';
import { readSignals } from '../signals/read.js';
import type { SignalUnit } from '../types.js';

/** The target's own labels: the ones `up` carries besides the scrape's relabelled extras. */
const TARGET_LABELS = ['job', 'instance', 'namespace', 'pod'] as const;

/** How far back the last successful scrape is looked for (a longer outage reads "no data"). */
const LOOKBACK = '1d';

/** A signal of the target's own `up` series: `of` wraps the scoped `up` selector in the aggregation. */
function targetSignal(
  name: string,
  label: string,
  unit: SignalUnit,
  of: (up: string, by: readonly string[]) => string,
): SignalDef {
  return { name, label, unit, scopeLabels: TARGET_LABELS, expr: (s) => of(selector('up', s.matchers), s.by) };
}

/** A count of the targets of the alert's job, all (`count`) or answering scrapes now (`sum` of `up`). */
function jobTargets(name: string, label: string, op: 'sum' | 'count'): SignalDef {
  return {
    name,
    label,
    unit: 'count',
    scopeLabels: ['job'],
    expr: (s) => aggregate(op, s.by, selector('up', s.matchers)),
  };
}

/**
 * Seconds since the target last answered a scrape (`up == 1`), from a 1-minute subquery over
 * {@link LOOKBACK}: no series when it has not answered in that time. Shown as a duration (`12 min`).
 */
export const DOWN_FOR_SECONDS: SignalDef = {
  ...targetSignal(
    'down_for_seconds',
    'Down for (since last successful scrape)',
    'seconds',
    (up, by) => `time() - ${aggregate('max', by, `max_over_time(timestamp(${up} == 1)[${LOOKBACK}:1m])`)}`,
  ),
  elapsed: true,
};

/** Share of the target's scrapes that succeeded in the last hour, ratio 0–1 (between 0 and 1: flapping). */
export const UP_RATIO_1H = targetSignal('up_ratio_1h', 'Scrapes answered (last hour)', 'ratio', (up, by) =>
  aggregate('avg', by, `avg_over_time(${up}[1h])`),
);

/** Targets of the alert's job answering scrapes now (count). */
export const JOB_TARGETS_UP = jobTargets('job_targets_up', 'Targets of the job up', 'sum');

/** Targets of the alert's job Prometheus scrapes (count). */
export const JOB_TARGETS = jobTargets('job_targets', 'Targets of the job', 'count');

export const TARGET_DOWN_SIGNALS: readonly SignalDef[] = [DOWN_FOR_SECONDS, UP_RATIO_1H, JOB_TARGETS_UP, JOB_TARGETS];

/** GPUs of the server's host still reporting to DCGM, and their last XID error code. */
export const TARGET_DOWN_GPU_SIGNALS: readonly GpuSignalDef[] = [GPUS_REPORTING, GPU_XID];

export const targetDownEnricher: Enricher<'target_down'> = {
  kind: 'target_down',
  enrich: async (alert, ctx) => {
    const [target, gpu] = await Promise.all([
      readSignals(ctx, alert, TARGET_DOWN_SIGNALS),
      readGpuSignals(ctx, alert, TARGET_DOWN_GPU_SIGNALS),
    ]);
    return { signals: [...target, ...gpu].filter((s) => s.value !== null) };
  },
};
