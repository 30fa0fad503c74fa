/**
 * Deciding what an alert is about, hence which signals to query.
 * Three sources, first match wins: the alert's `kind` label, the metrics its rule expression reads,
 * keywords in its `alertname`.
 */
import { alertExpression, type Alert } from '../alertmanager/schema.js';
import { comparesUpWithZero, identifierRuns } from '../prometheus/scan.js';
import type { AlertKind } from './types.js';

/** Accepted values of the `kind` label (compared case-insensitively, trimmed). */
export const KIND_ALIASES: ReadonlyMap<string, AlertKind> = new Map([
  ['kv_cache', 'kv_cache'],
  ['kv-cache', 'kv_cache'],
  ['cache', 'kv_cache'],
  ['gpu_memory', 'gpu_memory'],
  ['memory', 'gpu_memory'],
  ['latency', 'latency'],
  ['ttft', 'latency'],
  ['queue', 'queue'],
  ['error_rate', 'error_rate'],
  ['error', 'error_rate'],
  ['errors', 'error_rate'],
  ['target_down', 'target_down'],
  ['down', 'target_down'],
]);

/** The expression's identifiers ({@link identifierRuns}), read once per alert. */
type Identifiers = ReadonlySet<string>;

/** Whether the expression reads the metric `name` (or its histogram's `_bucket`, `_sum`, `_count`). */
const reads = (ids: Identifiers, name: string) => ['', '_bucket', '_sum', '_count'].some((s) => ids.has(`${name}${s}`));

/**
 * Metrics in the rule expression, checked in this order. Identifier lookups and one-pass scanners, no
 * backtracking pattern: the expression is alert text (`shared/prometheus/scan.ts`).
 */
const EXPRESSION_RULES: ReadonlyArray<[AlertKind, (expr: string, ids: Identifiers) => boolean]> = [
  ['latency', (_, ids) => reads(ids, 'vllm:time_to_first_token_seconds')],
  ['kv_cache', (_, ids) => reads(ids, 'vllm:gpu_cache_usage_perc') || reads(ids, 'vllm:kv_cache_usage_perc')],
  ['queue', (_, ids) => reads(ids, 'vllm:num_requests_waiting')],
  ['gpu_memory', (_, ids) => reads(ids, 'DCGM_FI_DEV_FB_USED') || reads(ids, 'DCGM_FI_DEV_FB_FREE')],
  // `up == 0` (any matchers): the target stopped answering scrapes.
  ['target_down', (e) => comparesUpWithZero(e)],
  [
    'error_rate',
    (e, ids) =>
      (reads(ids, 'http_requests_total') && e.includes('5xx')) ||
      /request_failure|finished_reason\s*=~?\s*"error"/.test(e),
  ],
];

/**
 * Keywords in `alertname`, checked in this order. "OOM" must be a word of its own (`GPUOOMKilled`,
 * `gpu_oom`, `GpuOom`) so that `ZoomLatency` is not a memory alert.
 */
const NAME_RULES: ReadonlyArray<[AlertKind, (name: string) => boolean]> = [
  ['latency', (n) => /ttft|latency/i.test(n)],
  ['kv_cache', (n) => /cache/i.test(n)],
  ['queue', (n) => /queue|backlog/i.test(n)],
  ['error_rate', (n) => /error/i.test(n)],
  ['gpu_memory', (n) => /memory|leak/i.test(n) || /OOM|Oom(?![a-z])|(?<![A-Za-z])oom(?![a-z])/.test(n)],
];

/**
 * Classifies an alert.
 * @returns the kind from (a) the `kind` label via {@link KIND_ALIASES}; else (b) the vLLM/DCGM/HTTP
 *   metrics named in the `generatorURL` expression; else (c) keywords in `alertname`; else `unknown`
 */
export function classifyAlert(alert: Pick<Alert, 'labels' | 'generatorURL'>): AlertKind {
  const label = alert.labels.kind?.trim().toLowerCase();
  const fromLabel = label === undefined ? undefined : KIND_ALIASES.get(label);
  if (fromLabel) return fromLabel;
  const expr = alertExpression(alert);
  const fromExpr = expr === undefined ? undefined : expressionKind(expr);
  if (fromExpr) return fromExpr;
  const name = alert.labels.alertname ?? '';
  return NAME_RULES.find(([, test]) => test(name))?.[0] ?? 'unknown';
}

function expressionKind(expr: string): AlertKind | undefined {
  const ids = new Set(identifierRuns(expr));
  return EXPRESSION_RULES.find(([, test]) => test(expr, ids))?.[0];
}
