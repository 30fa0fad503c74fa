/**
 * The Alertmanager webhook payload, version 4, as zod schemas.
 *
 * Mirrors Alertmanager's own `notify/webhook.Message` and `template.Data` field by field.
 * Unknown fields are stripped, not rejected: newer Alertmanagers add some.
 * Labels and annotations are kept exactly as sent (never renamed, lowercased or dropped).
 *
 * @see https://prometheus.io/docs/alerting/latest/configuration/#webhook_config
 * @see https://github.com/prometheus/alertmanager/blob/main/notify/webhook/webhook.go
 */
import { z } from 'zod';

/** Alertmanager sends this for `endsAt` while an alert is firing: Go's zero `time.Time`. */
export const GO_ZERO_TIME = '0001-01-01T00:00:00Z';

const labelSet = z.record(z.string(), z.string());

/** RFC 3339 timestamp as Alertmanager writes it (Go's `time.Time` JSON, nanosecond precision allowed). */
const timestamp = z.string().refine((s) => !Number.isNaN(Date.parse(s)) || s === GO_ZERO_TIME, {
  message: 'must be an RFC 3339 timestamp',
});

export const alertStatusSchema = z.enum(['firing', 'resolved']);

export const alertSchema = z.object({
  status: alertStatusSchema,
  labels: labelSet,
  annotations: labelSet.default({}),
  startsAt: timestamp,
  endsAt: timestamp,
  generatorURL: z.string().default(''),
  fingerprint: z.string().min(1),
});

export const webhookSchema = z.object({
  version: z.literal('4'),
  groupKey: z.string(),
  truncatedAlerts: z.number().int().nonnegative().default(0),
  status: alertStatusSchema,
  receiver: z.string(),
  groupLabels: labelSet,
  commonLabels: labelSet,
  commonAnnotations: labelSet,
  externalURL: z.string(),
  alerts: z.array(alertSchema).min(1),
});

export type AlertStatus = z.infer<typeof alertStatusSchema>;
/** One alert of a webhook payload. */
export type Alert = z.infer<typeof alertSchema>;
/** A whole Alertmanager webhook payload (version 4). */
export type WebhookMessage = z.infer<typeof webhookSchema>;

/**
 * Whether an alert has ended, per its own `endsAt` (the Go zero time means "not ended").
 * The alert's own `status` is what the pipeline acts on; this is for display.
 */
export function hasEnded(alert: Pick<Alert, 'endsAt'>): boolean {
  return alert.endsAt !== GO_ZERO_TIME && !alert.endsAt.startsWith('0001-');
}

/**
 * The PromQL expression of the rule that produced an alert, read from `generatorURL`'s
 * `g0.expr` query parameter (Prometheus's graph link). Returns `undefined` when absent or unparsable.
 */
export function alertExpression(alert: Pick<Alert, 'generatorURL'>): string | undefined {
  if (!alert.generatorURL) return undefined;
  try {
    return new URL(alert.generatorURL).searchParams.get('g0.expr') ?? undefined;
  } catch {
    return undefined;
  }
}
