/**
 * The link from an alert to the shipped Grafana dashboard (`infra/grafana/vllm-fleet.json`), opened on
 * the alert's model and instance and on a time range around its start. Pure: the base URL comes from
 * `GRAFANA_URL` (validated in `runtime/config.ts`), the rest from the alert.
 *
 * @see https://grafana.com/docs/grafana/latest/dashboards/build-dashboards/create-dashboard-url-variables/ (`var-<name>=value`)
 * @see https://grafana.com/docs/grafana/latest/visualizations/dashboards/variables/built-in-variables/ (`from`/`to` in a dashboard URL, epoch ms)
 */
import { alertExpression, hasEnded, hasKnownStart, type Alert } from '../alertmanager/schema.js';
import { trimTrailing } from '../core/trim.js';

/** The shipped dashboard's `uid` (its JSON's `uid`): `GRAFANA_URL` without a `/d/` path gets `/d/<uid>/<slug>` appended. */
export const DASHBOARD_UID = 'vllm-fleet';
const DASHBOARD_SLUG = 'vllm-fleet';

/** How far the dashboard's range reaches before `startsAt`, and at least after it, milliseconds. */
export const RANGE_AROUND_START_MS = 60 * 60_000;
/** How far past `endsAt` the range reaches for a resolved alert, milliseconds. */
export const RANGE_AFTER_END_MS = 10 * 60_000;

/** dcgm-exporter's node label (`Hostname` before 2026, `hostname` since): its `instance` is the exporter, not a vLLM server. */
const DCGM_NODE_LABELS = ['Hostname', 'hostname'] as const;
/** Labels only vLLM's and dcgm-exporter's series carry. */
const FLEET_LABELS = ['model_name', 'engine', ...DCGM_NODE_LABELS] as const;
/** A rule expression about vLLM (`vllm:` metrics, a `vllm` job) or its GPUs (`DCGM_FI_…`). */
const FLEET_EXPRESSION = /vllm|DCGM_/i;

/**
 * Whether the dashboard shows something about the alert: it carries a label of vLLM's or
 * dcgm-exporter's series, or its rule's expression (`generatorURL`) reads them. Other alerts routed
 * through the pipeline (its own, a web service's) get no link to an unrelated dashboard.
 */
function aboutTheFleet(alert: Pick<Alert, 'labels' | 'generatorURL'>): boolean {
  return FLEET_LABELS.some((name) => alert.labels[name]) || FLEET_EXPRESSION.test(alertExpression(alert) ?? '');
}

/**
 * The dashboard link of one alert.
 * @param base `GRAFANA_URL`: Grafana's root URL (a path prefix is fine; the shipped dashboard's
 *   `/d/vllm-fleet/vllm-fleet` is appended), or the URL of the dashboard itself (a path with `/d/<uid>`,
 *   for a dashboard imported under another uid); its query (`orgId=2`) is kept. Unset: `undefined`.
 * @param alert `labels.model_name` becomes `var-model`; `labels.instance` becomes `var-instance`
 *   unless the alert is a dcgm-exporter series (it has `Hostname`/`hostname`: its instance is the
 *   exporter, which would empty the vLLM panels; the GPU panels follow the model's instances instead).
 *   The range is `from` = `startsAt` − 1 h to `to` = `startsAt` + 1 h, or `endsAt` + 10 min when the
 *   alert is resolved later than that (epoch milliseconds); an unknown start (Go's zero time) gives
 *   no range (Grafana's default).
 * @returns the absolute URL; `undefined` without `base`, or when the alert is not about vLLM or its GPUs
 *   (none of `model_name`, `engine`, `Hostname`, `hostname`, and no `vllm` or `DCGM_` in its rule's expression)
 */
export function grafanaUrl(
  base: string | undefined,
  alert: Pick<Alert, 'labels' | 'startsAt' | 'endsAt' | 'status' | 'generatorURL'>,
): string | undefined {
  if (!base || !aboutTheFleet(alert)) return undefined;
  const url = new URL(base);
  if (!/\/d\/[^/]+/.test(url.pathname))
    url.pathname = `${trimTrailing(url.pathname, '/')}/d/${DASHBOARD_UID}/${DASHBOARD_SLUG}`;
  const { model_name: model, instance } = alert.labels;
  if (model) url.searchParams.set('var-model', model);
  if (instance && !DCGM_NODE_LABELS.some((name) => alert.labels[name])) url.searchParams.set('var-instance', instance);
  const range = timeRange(alert);
  if (range) {
    url.searchParams.set('from', String(range.from));
    url.searchParams.set('to', String(range.to));
  }
  return url.href;
}

/** The range around the alert's start, epoch milliseconds; `undefined` when its start is unknown or unreadable. */
function timeRange(alert: Pick<Alert, 'startsAt' | 'endsAt' | 'status'>): { from: number; to: number } | undefined {
  const start = hasKnownStart(alert) ? Date.parse(alert.startsAt) : Number.NaN;
  if (!Number.isFinite(start)) return undefined;
  const end = alert.status === 'resolved' && hasEnded(alert) ? Date.parse(alert.endsAt) : Number.NaN;
  const to = Math.max(start + RANGE_AROUND_START_MS, Number.isFinite(end) ? end + RANGE_AFTER_END_MS : 0);
  return { from: start - RANGE_AROUND_START_MS, to };
}
