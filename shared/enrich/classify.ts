/**
 * Deciding what an alert is about, hence which signals to query.
 * Three sources, first match wins: the alert's `kind` label, the metrics its rule expression reads,
 * keywords in its `alertname`.
 */
import { alertExpression, type Alert } from '../alertmanager/schema.js';
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

/** A metric name not preceded or followed by another metric-name character. */
const metric = (name: string) => new RegExp(`(?<![A-Za-z0-9_:])${name}(?:_bucket|_sum|_count)?(?![A-Za-z0-9_:])`);

/** Metrics in the rule expression, checked in this order. */
const EXPRESSION_RULES: ReadonlyArray<[AlertKind, (expr: string) => boolean]> = [
  ['latency', (e) => metric('vllm:time_to_first_token_seconds').test(e)],
  ['kv_cache', (e) => metric('vllm:gpu_cache_usage_perc').test(e) || metric('vllm:kv_cache_usage_perc').test(e)],
  ['queue', (e) => metric('vllm:num_requests_waiting').test(e)],
  ['gpu_memory', (e) => metric('DCGM_FI_DEV_FB_USED').test(e) || metric('DCGM_FI_DEV_FB_FREE').test(e)],
  // `up == 0` (any matchers): the target stopped answering scrapes.
  ['target_down', (e) => /(?<![A-Za-z0-9_:])up\s*(?:\{[^}]*\})?\s*==\s*0(?![0-9.])/.test(e)],
  ['error_rate', (e) => (metric('http_requests_total').test(e) && e.includes('5xx')) || /request_failure|finished_reason\s*=~?\s*"error"/.test(e)],
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
  const fromExpr = expr === undefined ? undefined : EXPRESSION_RULES.find(([, test]) => test(expr))?.[0];
  if (fromExpr) return fromExpr;
  const name = alert.labels.alertname ?? '';
  return NAME_RULES.find(([, test]) => test(name))?.[0] ?? 'unknown';
}
