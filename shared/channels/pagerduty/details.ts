/**
 * `payload.custom_details` of a trigger: what the responder needs without opening a chat message —
 * the likely cause and its evidence, the fresh values from Prometheus (when it fired → now), the
 * memory trend, why enrichment is unavailable, and the alert's own labels and annotations.
 * Values are text as the other channels word them (`97.3%`, `850 ms`): PagerDuty shows the object as is.
 */
import type { EnrichedAlert } from '../../enrich/types.js';
import { formatMemoryTrend } from '../../enrich/values.js';
import { formatReading, formatTime, formatTrendBasis } from '../../render/format.js';
import type { Flapping } from '../../render/notification.js';

/** The details of one alert. Keys are snake_case words, as PagerDuty shows them. */
export function alertDetails(
  alert: EnrichedAlert,
  extra: { generation?: number; flapping?: Flapping },
): Record<string, unknown> {
  const e = alert.enrichment;
  const details: Record<string, unknown> = {};
  if (e.status === 'enriched' && e.likelyCause) {
    details.likely_cause = e.likelyCause.cause;
    details.evidence = e.likelyCause.evidence;
    details.try = e.likelyCause.action;
  }
  if (e.status === 'enriched' && e.signals.length) {
    details.signals = Object.fromEntries(
      e.signals.map((s) => [
        s.label,
        s.atStart === undefined
          ? formatReading(s.value, s)
          : `${formatReading(s.atStart, s)} → ${formatReading(s.value, s)} (when fired → now)`,
      ]),
    );
  }
  if (e.status === 'enriched' && e.trend)
    details.memory_trend = `${formatMemoryTrend(e.trend)} (${formatTrendBasis(e.trend)})`;
  if (e.status === 'enriched' && e.trend?.sparkline) details.memory_over_window = e.trend.sparkline;
  if (e.status === 'unavailable') details.enrichment_unavailable = e.reason;
  if (alert.annotations.description) details.description = alert.annotations.description;
  if (alert.annotations.message) details.message = alert.annotations.message;
  details.started = formatTime(alert.startsAt);
  if (extra.generation)
    details.firing_again = `fired again after its resolve was announced (generation ${extra.generation})`;
  if (extra.flapping)
    details.flapping = `fired ${extra.flapping.count} times since ${formatTime(new Date(extra.flapping.sinceMs).toISOString())}`;
  if (alert.cut?.length) details.cut = alert.cut;
  details.fingerprint = alert.fingerprint;
  details.labels = alert.labels;
  details.annotations = alert.annotations;
  return details;
}

/** The details that are never too big: everything but the alert's own labels and annotations (the 512 KB fallback). */
export function shortDetails(details: Record<string, unknown>): Record<string, unknown> {
  const { labels: _labels, annotations: _annotations, description: _description, message: _message, ...rest } = details;
  return {
    ...rest,
    details_cut: 'labels, annotations, description and message left out: the event was over PagerDuty’s 512 KB',
  };
}
