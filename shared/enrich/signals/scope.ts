/**
 * Which of an alert's labels narrow a query to the alert's own series.
 * Only labels that identify a series are used; rule-added labels (`alertname`, `severity`, `kind`,
 * team routing labels) never are, because the series do not carry them.
 */
import type { Alert } from '../../alertmanager/schema.js';
import { equalityMatchers } from '../../prometheus/promql.js';
import { scopeSelectors } from '../../prometheus/scope-selectors.js';

/** Labels on vLLM's `vllm:*` metrics (engine labels plus the usual target labels). */
export const VLLM_SCOPE_LABELS = ['model_name', 'instance', 'job', 'namespace', 'pod', 'engine'] as const;

/**
 * The matcher that keeps an engine's own series: every engine labels its series with the model it
 * serves, while production-stack's router re-exports `vllm:num_requests_running`/`_waiting` (and a
 * few more) once per backend with a `server` label and no `model_name`: read with the engines', they
 * would count each queue twice and add a model-less server.
 */
export const ENGINE_SERIES = 'model_name!=""';

/**
 * Labels on vLLM's API-server `http_requests_total` (prometheus-fastapi-instrumentator): target labels
 * and `handler`; not `model_name`/`engine`, which that metric does not carry.
 */
export const HTTP_SCOPE_LABELS = ['instance', 'job', 'namespace', 'pod', 'handler'] as const;

/**
 * Labels on NVIDIA dcgm-exporter metrics (`DCGM_FI_*`): the node label is `Hostname` before the 2026
 * releases and `hostname` since; a MIG instance adds `GPU_I_ID`, Kubernetes mapping `pod`/`namespace`.
 */
export const DCGM_SCOPE_LABELS = [
  'gpu',
  'Hostname',
  'hostname',
  'UUID',
  'GPU_I_ID',
  'instance',
  'job',
  'namespace',
  'pod',
] as const;

/** Labels every scraped series carries, for other exporters' metrics (e.g. `process_resident_memory_bytes`). */
export const TARGET_SCOPE_LABELS = ['instance', 'job', 'namespace', 'pod', 'container'] as const;

/**
 * The alert's identifying labels as PromQL equality matchers, e.g. `['model_name="qwen3-8b"']`.
 * Empty when the alert carries none of `names` (the query then covers the whole fleet).
 */
export function scopeOf(alert: Pick<Alert, 'labels'>, names: readonly string[]): string[] {
  return equalityMatchers(alert.labels, names);
}

/**
 * A rule expression (alert text: whoever posts to Alertmanager's API writes it) with every selector
 * narrowed to `labels`' identifying labels, by the metric's family (vLLM, DCGM, any scraped target), as
 * escaped equality matchers, so it reads the alert's own series, not the whole fleet's. A selector
 * `labels` name none of the labels of is kept only when it names its metric exactly (what the rule itself
 * reads at each evaluation). What the chart links and the `unknown` enricher run.
 * @returns `undefined` when the expression is not to be run: it holds what the reader does not follow,
 *   or a selector that would still read series it does not name exactly (`{__name__=~".+"}`)
 */
export function scopedToLabels(expr: string, labels: Readonly<Record<string, string>>): string | undefined {
  return scopeSelectors(expr, (metric) => {
    const names = metric?.startsWith('vllm:')
      ? VLLM_SCOPE_LABELS
      : metric?.startsWith('DCGM_')
        ? DCGM_SCOPE_LABELS
        : TARGET_SCOPE_LABELS;
    return equalityMatchers(labels, names);
  });
}
