/**
 * The enrichment stage: fresh Prometheus values for each alert of a group (when it fired and now),
 * the memory trend, and a likely cause; time-boxed, never throwing. Queries are aggregated over the
 * alerts of each kind, so a group costs a number of queries per kind, not per alert.
 */
import { performance } from 'node:perf_hooks';
import type { Alert } from '../alertmanager/schema.js';
import type { Logger } from '../core/logger.js';
import { PrometheusClient, PrometheusError } from '../prometheus/client.js';
import { classifyAlert } from './classify.js';
import { createContext } from './context.js';
import { EnrichmentUnavailable, type EnrichContext, type MemoryUnit } from './enricher.js';
import { ENRICHERS } from './kinds/index.js';
import { DCGM_FB_USED } from './kinds/gpu-memory.js';
import { likelyCause } from './causes/likely-cause.js';
import { ENGINE_NAMES, engineOf } from './engines.js';
import type { AlertKind, Enrichment, UnavailableCause } from './types.js';
import { truncateChars } from '../core/truncate.js';
import { redactSecrets } from '../core/secret.js';
import type { HttpCredentials } from '../core/endpoint.js';

export type { MemoryUnit } from './enricher.js';
export type * from './types.js';

export interface EnrichDeps {
  /** Base URL of the Prometheus HTTP API; unset makes every alert `unavailable`. */
  prometheusUrl?: string;
  /** What every query carries (`PROMETHEUS_BEARER_TOKEN`, `PROMETHEUS_BASIC_AUTH`, `PROMETHEUS_HEADERS`, `PROMETHEUS_SIGV4_REGION`). */
  prometheusCredentials?: HttpCredentials;
  /** Budget of the whole call (all queries of all alerts), milliseconds. */
  timeoutMs: number;
  /** Window of the GPU memory regression, hours. */
  memoryTrendWindowHours: number;
  /** Memory capacity, MiB, overriding `DCGM_FI_DEV_FB_USED + DCGM_FI_DEV_FB_FREE` (and the only capacity of other series). */
  gpuMemoryCapacityMiB?: number;
  /** Metric of the memory trend (default `DCGM_FI_DEV_FB_USED`), e.g. `process_resident_memory_bytes`. */
  memorySeries?: string;
  /** Unit of `memorySeries` (default: `bytes` when its name ends in `_bytes`, else `MiB`). */
  memorySeriesUnit?: MemoryUnit;
  /** Time-out of each query attempt, milliseconds (default: half of `timeoutMs`, so the one retry fits). */
  queryTimeoutMs?: number;
  logger: Logger;
  /** Evaluation time of every query (default: the current time). */
  now?: () => Date;
}

/** Longest Prometheus error text kept in a reason; the rest is in the logs. */
const MAX_REASON_DETAIL = 160;

/**
 * Enriches a group's alerts, firing and resolved alike (for a resolved alert the values show the
 * recovery). Identical queries are sent once; the whole call is bounded by `deps.timeoutMs`.
 * @returns one {@link Enrichment} per alert, keyed by `fingerprint`. Never throws: when Prometheus is
 *   unset, unreachable, slow or answers an error, the affected alerts are `unavailable` with a short reason.
 */
export async function enrichAlerts(alerts: Alert[], deps: EnrichDeps): Promise<Map<string, Enrichment>> {
  const results = new Map<string, Enrichment>();
  const kinds = new Map<string, AlertKind>();
  try {
    for (const alert of alerts) kinds.set(alert.fingerprint, classifyAlert(alert));
    if (!deps.prometheusUrl)
      return fillUnavailable(
        { alerts, kinds, results },
        { en: 'PROMETHEUS_URL not set', zh: '未设置 PROMETHEUS_URL' },
        'not_configured',
      );
    await enrichAll({ alerts, kinds, results }, { ...deps, prometheusUrl: deps.prometheusUrl });
  } catch (err) {
    deps.logger.error('enrichment failed', { error: err });
    fillUnavailable({ alerts, kinds, results }, { en: 'enrichment failed', zh: '查询出错' }, 'error');
  }
  return results;
}

/** A group's alerts, each one's kind, and the results so far (filled in place), by `fingerprint`. */
interface Batch {
  alerts: Alert[];
  kinds: Map<string, AlertKind>;
  results: Map<string, Enrichment>;
}

/** What each alert's enrichment is bounded by: the whole call's budget, and why it ran out when it did. */
interface Bounds {
  budget: AbortSignal;
  timedOut: () => Reason;
  logger: Logger;
}

async function enrichAll(
  { alerts, kinds, results }: Batch,
  deps: EnrichDeps & { prometheusUrl: string },
): Promise<void> {
  const budget = AbortSignal.timeout(deps.timeoutMs);
  // Queries still running when the stage returns (another query of their alert failed) are cancelled.
  const finished = new AbortController();
  const client = new PrometheusClient(
    { url: deps.prometheusUrl, credentials: deps.prometheusCredentials },
    {
      queryTimeoutMs: deps.queryTimeoutMs ?? Math.floor(deps.timeoutMs / 2),
    },
  );
  const signal = AbortSignal.any([budget, finished.signal]);
  const group = createContext(client, {
    signal,
    now: deps.now?.() ?? new Date(),
    memory: memorySettings(deps),
    logger: deps.logger,
  });
  const bounds: Bounds = { budget, timedOut: watchBudget(budget, client, deps.timeoutMs), logger: deps.logger };
  const started = Date.now();
  const work = Promise.all(
    [...byKind(alerts, kinds)].flatMap(([kind, peers]) => {
      const ctx = group.forKind(kind, peers);
      return peers.map(async (alert) => results.set(alert.fingerprint, await enrichOne(alert, { kind, ctx }, bounds)));
    }),
  );
  // The race guarantees the budget even if some step ignored the abort signal.
  await raceAbort(work, budget).finally(() => finished.abort());
  fillUnavailable({ alerts, kinds, results }, bounds.timedOut(), 'timeout');
  deps.logger.debug('enrich.done', {
    alerts: alerts.length,
    queries: group.queryCount(),
    requests: group.requestCount(),
    queriesByKind: group.queriesByKind(),
    ms: Date.now() - started,
  });
  logUnavailable(results, deps.logger);
}

/** The alerts by kind, in payload order. */
function byKind(alerts: readonly Alert[], kinds: ReadonlyMap<string, AlertKind>): Map<AlertKind, Alert[]> {
  const out = new Map<AlertKind, Alert[]>();
  for (const alert of alerts) {
    const kind = kinds.get(alert.fingerprint) ?? 'unknown';
    // Appended in place: a storm brings thousands of alerts of one kind.
    const peers = out.get(kind);
    if (peers) peers.push(alert);
    else out.set(kind, [alert]);
  }
  return out;
}

/**
 * Watches the budget: when it runs out, whether on Prometheus (a request unanswered) or on this
 * process's own work. @returns the reason to give an alert the budget left without a result
 */
function watchBudget(budget: AbortSignal, client: PrometheusClient, timeoutMs: number): () => Reason {
  const loopAtStart = performance.eventLoopUtilization();
  let spent: BudgetSpent = { waiting: true, busy: false };
  const onBudgetSpent = () => {
    spent = {
      waiting: client.waiting > 0,
      busy: performance.eventLoopUtilization(loopAtStart).utilization >= BUSY_SHARE,
    };
  };
  budget.addEventListener('abort', onBudgetSpent, { once: true });
  return () => timeoutReason(timeoutMs, spent);
}

/** The memory-trend settings, defaults applied. */
function memorySettings(deps: EnrichDeps): EnrichContext['memory'] {
  const series = deps.memorySeries ?? DCGM_FB_USED;
  return {
    series,
    unit: deps.memorySeriesUnit ?? (series.endsWith('_bytes') ? 'bytes' : 'MiB'),
    windowHours: deps.memoryTrendWindowHours,
    capacityMiB: deps.gpuMemoryCapacityMiB,
  };
}

/** One alert's enrichment by the enricher of its kind, with the context of its kind's peers. */
async function enrichOne(
  alert: Alert,
  { kind, ctx }: { kind: AlertKind; ctx: EnrichContext },
  { budget, timedOut, logger }: Bounds,
): Promise<Enrichment> {
  try {
    const { signals, trend } = await ENRICHERS[kind].enrich(alert, ctx);
    const engine = engineOf(alert);
    const cause = likelyCause(kind, { signals, trend, engine });
    return {
      status: 'enriched',
      kind,
      signals,
      ...(trend ? { trend } : {}),
      ...(cause ? { likelyCause: cause } : {}),
      ...(engine === 'vllm' ? {} : { engine: ENGINE_NAMES[engine] }),
    };
  } catch (err) {
    if (!(err instanceof PrometheusError || err instanceof EnrichmentUnavailable || budget.aborted)) {
      logger.warn('alert enrichment failed', { fingerprint: alert.fingerprint, kind, error: err });
    }
    const reason = failureReason(err, budget, timedOut);
    return { status: 'unavailable', kind, reason: reason.en, reasonZh: reason.zh, cause: failureCause(err, budget) };
  }
}

/** Why an alert has no enrichment, in English and in Chinese (what Prometheus said is quoted as it said it). */
interface Reason {
  en: string;
  zh: string;
}

/** A short reason for a channel to show. */
function failureReason(err: unknown, budget: AbortSignal, timedOut: () => Reason): Reason {
  if (budget.aborted) return timedOut();
  if (err instanceof EnrichmentUnavailable) return { en: err.message, zh: err.reasonZh };
  if (err instanceof PrometheusError) {
    if (err.errorType === 'network') {
      const code = /\(([A-Z0-9_]+)\)$/.exec(err.message)?.[1];
      return { en: err.message, zh: `连不上 Prometheus${code ? `（${code}）` : ''}` };
    }
    // `401 from Prometheus: …`, `PROMETHEUS_SIGV4_REGION: no AWS credentials …`: what to fix, said first.
    if (err.errorType === 'unauthorized' || err.errorType === 'credentials') {
      const said = truncateChars(redactSecrets(err.message), MAX_REASON_DETAIL);
      return { en: said, zh: `Prometheus 认证失败：${said}` };
    }
    const status = err.httpStatus === undefined ? '' : `HTTP ${err.httpStatus}, `;
    const said = truncateChars(redactSecrets(err.message), MAX_REASON_DETAIL);
    return {
      en: `Prometheus error (${status}${err.errorType}): ${said}`,
      zh: `Prometheus 返回错误（${status.replace(', ', '，')}${err.errorType}）：${said}`,
    };
  }
  const said = err instanceof Error ? err.message : String(err);
  return { en: `enrichment failed: ${said}`, zh: `查询出错：${said}` };
}

function failureCause(err: unknown, budget: AbortSignal): UnavailableCause {
  if (budget.aborted) return 'timeout';
  if (err instanceof EnrichmentUnavailable) return 'no_query';
  if (err instanceof PrometheusError)
    return err.errorType === 'network' ? 'network' : err.errorType === 'timeout' ? 'timeout' : 'prometheus_error';
  return 'error';
}

/**
 * Share of the budget this process's event loop spent running code (not waiting) above which the
 * process, not Prometheus, had the budget: an answer that arrives while the loop is busy is not read
 * until it is free, and a request queued then is not even sent, so an open request proves nothing.
 */
const BUSY_SHARE = 0.5;

/** What held the budget when it ran out: a request to Prometheus still open; the event loop mostly busy. */
interface BudgetSpent {
  waiting: boolean;
  busy: boolean;
}

/**
 * Why the budget ran out: Prometheus, when a request was still unanswered while this process was
 * free to read its answer, else this process's own work (a storm's thousands of alerts on a busy
 * CPU): blaming Prometheus then sends on-call to the wrong place.
 */
function timeoutReason(timeoutMs: number, spent: BudgetSpent): Reason {
  const budget = timeoutMs >= 1000 ? `${Number((timeoutMs / 1000).toFixed(1))} s` : `${timeoutMs} ms`;
  if (!spent.waiting)
    return {
      en: `enrichment did not finish within ${budget} (Prometheus had answered; this process was busy)`,
      zh: `${budget} 内没查完（Prometheus 已经返回，是本服务太忙）`,
    };
  return spent.busy
    ? {
        en: `enrichment did not finish within ${budget} (this process was busy; a request to Prometheus was still open)`,
        zh: `${budget} 内没查完（本服务太忙，还有一个 Prometheus 请求没返回）`,
      }
    : { en: `Prometheus did not answer within ${budget}`, zh: `Prometheus ${budget} 内没有响应` };
}

/** Sets `reason` for every alert that has no result yet. */
function fillUnavailable(
  { alerts, kinds, results }: Batch,
  reason: Reason,
  cause: UnavailableCause,
): Map<string, Enrichment> {
  for (const { fingerprint } of alerts) {
    if (!results.has(fingerprint))
      results.set(fingerprint, {
        status: 'unavailable',
        kind: kinds.get(fingerprint) ?? 'unknown',
        reason: reason.en,
        reasonZh: reason.zh,
        cause,
      });
  }
  return results;
}

/** One warning per distinct reason, not one per alert. */
function logUnavailable(results: Map<string, Enrichment>, logger: Logger): void {
  const byReason = new Map<string, number>();
  for (const e of results.values())
    if (e.status === 'unavailable') byReason.set(e.reason, (byReason.get(e.reason) ?? 0) + 1);
  for (const [reason, alerts] of byReason) logger.warn('enrichment unavailable', { reason, alerts });
}

/** Resolves when `work` settles or `signal` aborts, whichever is first. */
async function raceAbort(work: Promise<unknown>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return;
  let onAbort = () => {};
  const aborted = new Promise<void>((resolve) => {
    onAbort = resolve;
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    await Promise.race([work, aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}
