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

/** The target's own labels: the ones `up` carries besides the scrape's relabelled extras. */
const TARGET_LABELS = ['job', 'instance', 'namespace', 'pod'] as const;

/** How far back the last successful scrape is looked for (a longer outage reads "no data"). */
const LOOKBACK = '1d';

/**
 * Seconds since the target last answered a scrape (`up == 1`), from a 1-minute subquery over
 * {@link LOOKBACK}: no series when it has not answered in that time.
 */
export const DOWN_FOR_SECONDS: SignalDef = {
  name: 'down_for_seconds',
  label: 'Down for (since last successful scrape)',
  unit: 'seconds',
  scopeLabels: TARGET_LABELS,
  expr: (s) => `time() - ${aggregate('max', s.by, `max_over_time(timestamp(${selector('up', s.matchers)} == 1)[${LOOKBACK}:1m])`)}`,
};

/** Share of the target's scrapes that succeeded in the last hour, ratio 0–1 (between 0 and 1: flapping). */
export const UP_RATIO_1H: SignalDef = {
  name: 'up_ratio_1h',
  label: 'Scrapes answered (last hour)',
  unit: 'ratio',
  scopeLabels: TARGET_LABELS,
  expr: (s) => aggregate('avg', s.by, `avg_over_time(${selector('up', s.matchers)}[1h])`),
};

/** Targets of the alert's job answering scrapes now (count). */
export const JOB_TARGETS_UP: SignalDef = {
  name: 'job_targets_up',
  label: 'Targets of the job up',
  unit: 'count',
  scopeLabels: ['job'],
  expr: (s) => aggregate('sum', s.by, selector('up', s.matchers)),
};

/** Targets of the alert's job Prometheus scrapes (count). */
export const JOB_TARGETS: SignalDef = {
  name: 'job_targets',
  label: 'Targets of the job',
  unit: 'count',
  scopeLabels: ['job'],
  expr: (s) => aggregate('count', s.by, selector('up', s.matchers)),
};

export const TARGET_DOWN_SIGNALS: readonly SignalDef[] = [DOWN_FOR_SECONDS, UP_RATIO_1H, JOB_TARGETS_UP, JOB_TARGETS];

/** GPUs of the server's host still reporting to DCGM, and their last XID error code. */
export const TARGET_DOWN_GPU_SIGNALS: readonly GpuSignalDef[] = [GPUS_REPORTING, GPU_XID];

export const targetDownEnricher: Enricher<'target_down'> = {
  kind: 'target_down',
  enrich: async (alert, ctx) => {
    const [target, gpu] = await Promise.all([readSignals(ctx, alert, TARGET_DOWN_SIGNALS), readGpuSignals(ctx, alert, TARGET_DOWN_GPU_SIGNALS)]);
    return { signals: [...target, ...gpu].filter((s) => s.value !== null) };
  },
};
