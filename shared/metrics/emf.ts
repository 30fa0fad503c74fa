/**
 * The CloudWatch adapter of the {@link Metrics} port (Lambda): each recording is one Embedded Metric
 * Format line on stdout, written by Powertools' `Metrics`, which CloudWatch Logs turns into a metric
 * in {@link CLOUDWATCH_NAMESPACE} under the same name as on `GET /metrics`.
 *
 * Dimensions: the Prometheus labels, and also none at all (an empty dimension set), so an alarm can
 * watch the plain name across every channel or Alertmanager. Powertools' default `service`
 * dimension is dropped for that reason. A failed notification also counts as
 * `llm_alert_pipeline_notifications_failed` (no dimensions), the metric the delivery alarm watches.
 * @see https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html
 * @see https://docs.powertools.aws.dev/lambda/typescript/latest/features/metrics/
 */
import { Metrics as Powertools, MetricUnit } from '@aws-lambda-powertools/metrics';
import { CLOUDWATCH_NAMESPACE, METRIC_PREFIX, type Metrics } from './catalogue.js';

type Unit = (typeof MetricUnit)[keyof typeof MetricUnit];

/** The EMF metric the CloudWatch "delivery failures" alarm watches (Sum, no dimensions). */
export const NOTIFICATIONS_FAILED = `${METRIC_PREFIX}notifications_failed`;

/** @param namespace CloudWatch namespace (default {@link CLOUDWATCH_NAMESPACE}) */
export function emfMetrics(namespace = CLOUDWATCH_NAMESPACE): Metrics {
  // One Powertools instance for every line, made on the first: its constructor (the environment read,
  // a Console of its own) cost ~1 ms per line on a cold start's first webhook when each line made one.
  // `publishStoredMetrics` clears the line's metric, dimensions and metadata, also when it throws; a line
  // refused before it is dropped with its instance.
  let line: Powertools | undefined;
  const emit = (name: string, unit: Unit, value: number, labels: Record<string, string>) => {
    try {
      if (!line) {
        line = new Powertools({ namespace });
        line.clearDefaultDimensions();
      }
      // Powertools drops empty dimension values; a label that is empty stays only in the log line.
      const dimensions = Object.fromEntries(Object.entries(labels).filter(([, v]) => v !== ''));
      if (Object.keys(dimensions).length) line.addDimensions(dimensions);
      line.addDimensions({});
      line.addMetric(name, unit, value);
      line.publishStoredMetrics();
    } catch {
      // A metric must never fail a delivery (Powertools throws on invalid names or too many dimensions).
      line = undefined;
    }
  };
  return {
    inc: (name, labels, value = 1) => {
      emit(`${METRIC_PREFIX}${name}`, MetricUnit.Count, value, labels);
      if (name === 'notifications_total' && (labels as { outcome?: string }).outcome === 'failed')
        emit(NOTIFICATIONS_FAILED, MetricUnit.Count, value, {});
    },
    observe: (name, labels, seconds) => emit(`${METRIC_PREFIX}${name}`, MetricUnit.Seconds, seconds, labels),
    set: (name, labels, value) => emit(`${METRIC_PREFIX}${name}`, MetricUnit.NoUnit, value, labels),
  };
}
