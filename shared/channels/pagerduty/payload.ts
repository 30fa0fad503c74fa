/**
 * An alert's labels in PagerDuty Common Event Format terms: the severity, the affected system
 * (`source`), the part of it (`component`), its cluster (`group`), the kind of problem (`class`)
 * and a one-line `summary`. Pure; labels are read, never changed.
 * @see https://developer.pagerduty.com/docs/events-api-v2/overview/#pagerduty-common-event-format-pd-cef
 */
import type { EnrichedAlert } from '../../enrich/types.js';
import { SEVERITY_LEVEL_RANK, severityLevel } from '../../alertmanager/severity.js';
import { truncateChars } from '../../core/truncate.js';
import { alertSaid } from '../../render/content.js';
import { PAGERDUTY_MAX_SUMMARY_CHARS, type PagerDutyPayload, type PagerDutySeverity } from './wire.js';

/**
 * Severity for a `severity` label value that names none of PagerDuty's four (or none at all):
 * `error`, as Alertmanager's own PagerDuty integration defaults to.
 * @see https://prometheus.io/docs/alerting/latest/configuration/#pagerduty_config
 */
export const DEFAULT_SEVERITY: PagerDutySeverity = 'error';

/**
 * PagerDuty's severity for a `severity` label value: its level in the one severity mapping
 * (`alertmanager/severity.ts`, whose levels are PagerDuty's four); {@link DEFAULT_SEVERITY} for none.
 * @example pagerDutySeverity('Critical') // 'critical'; pagerDutySeverity('page') // 'critical'; pagerDutySeverity(undefined) // 'error'
 */
export function pagerDutySeverity(label: string | undefined): PagerDutySeverity {
  return severityLevel(label) ?? DEFAULT_SEVERITY;
}

/** The highest of several severities (`info` for none). */
export function highestSeverity(severities: PagerDutySeverity[]): PagerDutySeverity {
  return severities.reduce<PagerDutySeverity>(
    (best, s) => (SEVERITY_LEVEL_RANK[s] > SEVERITY_LEVEL_RANK[best] ? s : best),
    'info',
  );
}

/** Labels that name the affected system, most specific first (a vLLM replica: its `instance` or `pod`). */
const SOURCE_LABELS = ['instance', 'pod', 'Hostname', 'hostname', 'node', 'host', 'job', 'service'] as const;
/** Labels that name the part of it that is broken: the served model first. */
const COMPONENT_LABELS = ['model_name', 'container', 'engine', 'gpu'] as const;
/** Labels that name a logical group of systems. */
const GROUP_LABELS = ['cluster', 'namespace', 'service', 'job'] as const;

const first = (labels: Record<string, string>, names: readonly string[]) =>
  names.map((n) => labels[n]?.trim()).find((v) => v);

/**
 * `source`, `component`, `group` and `class` of one alert. `source` is required and never empty:
 * with none of {@link SOURCE_LABELS}, the Alertmanager `receiver`, else `alertmanager`.
 */
export function affected(
  alert: EnrichedAlert,
  receiver: string,
): Pick<PagerDutyPayload, 'source' | 'component' | 'group' | 'class'> {
  const source = first(alert.labels, SOURCE_LABELS);
  const component = first(alert.labels, COMPONENT_LABELS);
  // `job` may already be the source (an alert with no instance); a group that repeats it says nothing.
  const group = GROUP_LABELS.map((n) => alert.labels[n]?.trim()).find((v) => v && v !== source);
  const kind = alert.labels.alertname || (alert.enrichment.kind !== 'unknown' ? alert.enrichment.kind : undefined);
  return {
    source: source ?? (receiver || 'alertmanager'),
    ...(component && { component }),
    ...(group && { group }),
    ...(kind && { class: kind }),
  };
}

/**
 * The alert as one line of at most {@link PAGERDUTY_MAX_SUMMARY_CHARS} characters:
 * `<alertname>: <what it says> (<model_name> @ <instance>)` (what it says: `summary`, else the first line of
 * `message`, `alertSaid`), the parts it has; `firing again`
 * when a later generation fires.
 */
export function alertSummary(alert: EnrichedAlert, firingAgain = false): string {
  const name = alert.labels.alertname ?? '';
  const said = alertSaid(alert);
  const title = [name, said && said !== name ? said : ''].filter(Boolean).join(': ') || 'alert';
  const where = [alert.labels.model_name, alert.labels.instance].filter(Boolean).join(' @ ');
  const text = `${firingAgain ? 'Firing again: ' : ''}${title}${where ? ` (${where})` : ''}`;
  return truncateChars(text.replace(/\s+/g, ' ').trim(), PAGERDUTY_MAX_SUMMARY_CHARS);
}
