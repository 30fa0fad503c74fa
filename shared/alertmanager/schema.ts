/**
 * The Alertmanager webhook payload, version 4, as zod schemas; and Grafana-managed alerting's webhook
 * contact point, which posts the same message with `"version": "1"` and fields of its own (`grafana.ts`).
 *
 * Mirrors Alertmanager's own `notify/webhook.Message` and `template.Data` field by field, and accepts
 * everything a correctly configured Alertmanager (any version with payload version 4) or an
 * Alertmanager-compatible sender posts: Alertmanager drops a request we answer 4xx and sends the
 * same one again at every flush, so only a payload that is wrong forever may fail here.
 * - Unknown fields, at any level, are stripped, not rejected: newer Alertmanagers and compatible
 *   senders add some.
 * - `fingerprint` (Alertmanager 0.19+) may be missing or empty: it is then computed from the labels
 *   exactly as Alertmanager computes it (`fingerprint.ts`), so dedupe keys survive an upgrade.
 * - Label and annotation names and values are any strings (Alertmanager 0.27+ allows UTF-8 names),
 *   kept exactly as sent: never renamed, lowercased or dropped (`__proto__` included).
 *
 * @see https://prometheus.io/docs/alerting/latest/configuration/#webhook_config
 * @see https://github.com/prometheus/alertmanager/blob/main/notify/webhook/webhook.go
 */
// zod/mini with English messages (`core/zod.ts`): classic zod would cost the receiver's cold init.
import * as z from '../core/zod.js';
import { labelSetFingerprint } from './fingerprint.js';
import {
  GRAFANA_WEBHOOK_VERSION,
  grafanaAlertFields,
  grafanaMessageFields,
  type GrafanaAlertFields,
  type GrafanaMessageFields,
} from './grafana.js';

/**
 * A realistic skew between a sender's clock (Prometheus, Grafana or Alertmanager on other hosts: no NTP, a
 * VM after suspend) and ours, milliseconds. Used only where a sender's time must be compared with ours
 * (an old link's coverage, Alertmanager's `endsAt`); elsewhere sender times are compared with sender times.
 */
export const SENDER_CLOCK_SKEW_MS = 5 * 60_000;

/** Alertmanager sends this for `endsAt` while an alert is firing: Go's zero `time.Time`. */
export const GO_ZERO_TIME = '0001-01-01T00:00:00Z';

const stringRecord = z.record(z.string(), z.string());

/**
 * A label set (or annotations): string names to string values, validated by zod but copied from the
 * input with data properties, because zod builds its output by assignment and an assigned
 * `__proto__` key is silently lost (a valid label name, `[a-zA-Z_][a-zA-Z0-9_]*`).
 */
const labelSet = z.pipe(
  z.unknown(),
  z.transform((input, ctx) => {
    const checked = stringRecord.safeParse(input);
    if (!checked.success) {
      for (const issue of checked.error.issues) ctx.issues.push({ ...issue, input } as z.core.$ZodRawIssue);
      return z.NEVER;
    }
    return Object.fromEntries(Object.entries(input as Record<string, string>));
  }),
);

/** RFC 3339 timestamp as Alertmanager writes it (Go's `time.Time` JSON, nanosecond precision allowed). */
const timestamp = z.string().check(
  z.refine((s) => !Number.isNaN(Date.parse(s)) || s === GO_ZERO_TIME, {
    message: 'must be an RFC 3339 timestamp',
  }),
);

export const alertStatusSchema = z.enum(['firing', 'resolved']);

/** Alertmanager's fields of one alert (`template.Alert`). */
const alertFields = {
  status: alertStatusSchema,
  labels: labelSet,
  annotations: z._default(labelSet, {}),
  startsAt: timestamp,
  endsAt: timestamp,
  generatorURL: z._default(z.string(), ''),
  /** Missing before Alertmanager 0.19 and from some compatible senders; empty treated as missing. */
  fingerprint: z.optional(z.string()),
};

/** A missing or empty `fingerprint` computed from the labels, as Alertmanager computes it. */
const withFingerprint = <A extends { fingerprint?: string; labels: Record<string, string> }>(alert: A) => ({
  ...alert,
  fingerprint: alert.fingerprint || labelSetFingerprint(alert.labels),
});

export const alertSchema = z.pipe(z.object(alertFields), z.transform(withFingerprint));

/** Alertmanager's fields of the message (`notify/webhook.Message`), `alerts` apart. */
const messageFields = {
  groupKey: z.string(),
  truncatedAlerts: z._default(z.number().check(z.int(), z.nonnegative()), 0),
  status: alertStatusSchema,
  receiver: z.string(),
  groupLabels: labelSet,
  commonLabels: labelSet,
  commonAnnotations: labelSet,
  externalURL: z.string(),
};

export const webhookSchema = z.object({
  version: z.literal('4'),
  ...messageFields,
  alerts: z.array(alertSchema).check(z.minLength(1)),
});

/** One alert of Grafana's webhook contact point: Alertmanager's fields and Grafana's (`grafana.ts`). */
export const grafanaAlertSchema = z.pipe(
  z.object({ ...alertFields, ...grafanaAlertFields }),
  z.transform(withFingerprint),
);

/** Grafana-managed alerting's webhook contact point: Alertmanager's message, version `1`, and Grafana's fields. */
export const grafanaWebhookSchema = z.object({
  version: z.literal(GRAFANA_WEBHOOK_VERSION),
  ...messageFields,
  ...grafanaMessageFields,
  alerts: z.array(grafanaAlertSchema).check(z.minLength(1)),
});

/**
 * Reads a webhook body from either sender: Alertmanager's (`version` `4`, {@link webhookSchema}) or
 * Grafana's webhook contact point (`version` `1`, {@link grafanaWebhookSchema}), chosen by its `version`;
 * any other version is read as Alertmanager's (its issues then name the version).
 */
export function parseWebhookBody(
  body: unknown,
): { success: true; data: WebhookMessage } | { success: false; error: z.core.$ZodError } {
  const grafana = (body as { version?: unknown } | null)?.version === GRAFANA_WEBHOOK_VERSION;
  return grafana ? grafanaWebhookSchema.safeParse(body) : webhookSchema.safeParse(body);
}

/**
 * One alert of a webhook payload: Alertmanager's fields, and Grafana's when Grafana sent it
 * (`sentByGrafana` in `grafana.ts`).
 */
export type Alert = z.infer<typeof alertSchema> & Partial<GrafanaAlertFields>;
/** A whole webhook payload: Alertmanager's (version 4) or Grafana's (version 1, with its fields). */
export type WebhookMessage = Omit<z.infer<typeof webhookSchema>, 'alerts' | 'version'> & {
  version: '4' | typeof GRAFANA_WEBHOOK_VERSION;
  alerts: Alert[];
} & Partial<GrafanaMessageFields>;

/**
 * Whether an alert has ended, per its own `endsAt` (the Go zero time means "not ended").
 * The alert's own `status` is what the pipeline acts on; this is for display.
 */
export function hasEnded(alert: Pick<Alert, 'endsAt'>): boolean {
  return alert.endsAt !== GO_ZERO_TIME && !alert.endsAt.startsWith('0001-');
}

/**
 * Whether the alert's start is known. A sender that cannot say when an alert started (AMP's default
 * SNS text, `shared/amp/default-text.ts`) sends Go's zero time; channels then show no start time.
 */
export function hasKnownStart(alert: Pick<Alert, 'startsAt'>): boolean {
  return alert.startsAt !== GO_ZERO_TIME && !alert.startsAt.startsWith('0001-');
}

/**
 * Longest `generatorURL` whose rule expression is read, characters (the pipeline's per-field cut,
 * 16 KiB, drops a longer one before fan-out). The expression is alert text that classification and
 * the chart scan: its length is capped before any of them runs.
 */
export const MAX_GENERATOR_URL_CHARS = 16 * 1024;

/**
 * The PromQL expression of the rule that produced an alert, read from `generatorURL`'s
 * `g0.expr` query parameter (Prometheus's graph link). Returns `undefined` when absent, unparsable,
 * or in a `generatorURL` longer than {@link MAX_GENERATOR_URL_CHARS}.
 */
export function alertExpression(alert: Pick<Alert, 'generatorURL'>): string | undefined {
  if (!alert.generatorURL || alert.generatorURL.length > MAX_GENERATOR_URL_CHARS) return undefined;
  try {
    return new URL(alert.generatorURL).searchParams.get('g0.expr') ?? undefined;
  } catch {
    return undefined;
  }
}
