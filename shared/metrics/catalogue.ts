/**
 * The pipeline's own metrics: one catalogue of names, labels and units, read by both adapters so
 * `GET /metrics` (Prometheus, `npm start`) and CloudWatch (EMF, Lambda) cannot drift apart. The names
 * are a public contract (alert rules, dashboards and CloudWatch alarms use them): add, never rename.
 *
 * The pipeline sees only the {@link Metrics} port; prom-client and Powertools stay in the adapters.
 * @see https://prometheus.io/docs/practices/naming/
 */
import { FINAL_DECISIONS } from '../store/dedupe.js';
import type { DeliveryFailureReason } from '../channels/channel.js';

/** Prefix of every metric name. */
export const METRIC_PREFIX = 'llm_alert_pipeline_';
/** CloudWatch namespace of the EMF metrics (Lambda). */
export const CLOUDWATCH_NAMESPACE = 'LlmAlertPipeline';

export const COUNTERS = {
  alerts_received_total: {
    help: 'Alerts received in Alertmanager webhook payloads and AMP messages (heartbeats included).',
    labels: [],
  },
  dedupe_decisions_total: {
    help: 'Dedupe decisions, one per alert event once settled (first notification, firing again, repair, already notified, in flight, stale copy).',
    labels: ['decision'],
  },
  notifications_total: {
    help: 'Notifications per channel instance, by outcome (delivered, failed) and failure reason (ok when delivered).',
    labels: ['channel', 'outcome', 'reason'],
  },
  enrichment_unavailable_total: {
    help: 'Alerts sent without enrichment, by reason (not_configured, timeout, network, prometheus_error, no_query, error, storm: no longer counted, storms are enriched).',
    labels: ['reason'],
  },
  webhook_requests_total: { help: 'Webhook requests (POST /v1/alertmanager) by HTTP status code.', labels: ['code'] },
  webhook_unauthenticated_total: {
    help: 'Requests refused for authentication (missing, malformed or wrong token, or no WEBHOOK_TOKEN configured).',
    labels: ['reason'],
  },
  webhook_wrong_token_total: {
    help: 'Webhook requests (POST /v1/alertmanager) carrying a bearer token that matches neither WEBHOOK_TOKEN nor WEBHOOK_TOKEN_PREVIOUS: an Alertmanager with a stale token, whose alerts are refused (401). The alarm watches this, not the noise.',
    labels: [],
  },
  unsolicited_requests_total: {
    help: 'Requests that no Alertmanager or person of ours sends (internet noise on a public URL), by reason: no_token (the webhook path without a bearer token), unknown_path (a path we do not serve). Kept apart from the webhook metrics the alarms watch.',
    labels: ['reason'],
  },
  heartbeats_ignored_total: {
    help: 'Heartbeat alerts (HEARTBEAT_ALERTNAME) not recorded, by reason: unexpected_alertmanager (not in HEARTBEAT_EXTERNAL_URLS), unexpected_fingerprint (not in HEARTBEAT_FINGERPRINTS), too_many (beyond HEARTBEAT_MAX_CLUSTERS). They never reach a channel.',
    labels: ['reason'],
  },
  follow_ups_total: {
    help: 'Acknowledgement follow-ups per channel instance, by outcome: delivered (at the first try), queued (kept in the table after a failure that passes, such as a 429), delivered_on_retry, given_up (refused for good, or its retries ran out).',
    labels: ['channel', 'outcome'],
  },
  amp_messages_total: {
    help: 'SNS messages from Amazon Managed Service for Prometheus, by how the body was read: json, text (the default template), unparsed (delivered as raw text in an AMPUnparsedMessage alert).',
    labels: ['body'],
  },
} as const;

/** Histograms; values in seconds. */
export const HISTOGRAMS = {
  delivery_duration_seconds: {
    help: 'Time to deliver one notification to one channel instance, retries included, seconds.',
    labels: ['channel'],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20],
  },
  enrichment_duration_seconds: {
    help: 'Time to enrich one group from Prometheus, seconds.',
    labels: [],
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5],
  },
} as const;

export const GAUGES = {
  heartbeat_last_seen_timestamp_seconds: {
    help: 'When an Alertmanager (its externalURL; "(empty externalURL)" for an empty one) itself last delivered a heartbeat (HEARTBEAT_ALERTNAME), Unix seconds. A passive HA peer stays old while its cluster is healthy.',
    labels: ['alertmanager'],
  },
  heartbeat_missing: {
    help: '1 while no peer of a cluster this Alertmanager belongs to (the Alertmanagers that delivered the same heartbeat alert) delivered it for HEARTBEAT_TIMEOUT_SECONDS, else 0. alertmanager="": any cluster, or no heartbeat ever received a full timeout after the first check.',
    labels: ['alertmanager'],
  },
} as const;

export type CounterName = keyof typeof COUNTERS;
export type HistogramName = keyof typeof HISTOGRAMS;
export type GaugeName = keyof typeof GAUGES;
type LabelsOf<D> = D extends { labels: readonly (infer L extends string)[] } ? Record<L, string> : never;
export type CounterLabels<N extends CounterName> = LabelsOf<(typeof COUNTERS)[N]>;
export type HistogramLabels<N extends HistogramName> = LabelsOf<(typeof HISTOGRAMS)[N]>;
export type GaugeLabels<N extends GaugeName> = LabelsOf<(typeof GAUGES)[N]>;

/** Label values with a closed set, listed so adapters can create their series at zero. */
export const KNOWN_VALUES = {
  decision: FINAL_DECISIONS,
  failureReason: [
    'timeout',
    'network',
    'rate_limited',
    'server_error',
    'client_error',
    'platform_error',
    'content_refused',
    'other',
  ] satisfies DeliveryFailureReason[],
  unauthenticated: ['missing_token', 'malformed_header', 'invalid_token', 'no_token_configured'],
  // Every status the webhook answers (app.ts), so a rule's increase() sees the first 4xx of a series.
  webhookCode: ['200', '400', '401', '404', '413', '502', '503'],
  /** What noise on the public URL was (`unsolicited_requests_total{reason}`). */
  unsolicited: ['no_token', 'unknown_path'],
  /** Why a heartbeat alert was not recorded (`heartbeats_ignored_total{reason}`; shared/heartbeat/receive.ts). */
  heartbeatIgnored: ['unexpected_alertmanager', 'unexpected_fingerprint', 'too_many'],
  /** How an acknowledgement follow-up went (`follow_ups_total{outcome}`; `FollowUpOutcome` in shared/ack/follow-ups.ts). */
  followUpOutcome: ['delivered', 'queued', 'delivered_on_retry', 'given_up'],
  /** How an AMP message's body was read (`amp_messages_total{body}`; `AmpBodyKind` in shared/amp). */
  ampBody: ['json', 'text', 'unparsed'],
} as const;

/** Why a heartbeat alert was not recorded (`heartbeats_ignored_total{reason}`). */
export type HeartbeatIgnoredReason = (typeof KNOWN_VALUES.heartbeatIgnored)[number];

/** Why a request was refused for authentication (`webhook_unauthenticated_total{reason}`). */
export type UnauthenticatedReason = (typeof KNOWN_VALUES.unauthenticated)[number];

/**
 * The port the pipeline, the app and the heartbeat check record through. Implementations never
 * throw: a metric must not fail a delivery.
 */
export interface Metrics {
  /** Adds `value` (default 1) to a counter. */
  inc<N extends CounterName>(name: N, labels: CounterLabels<N>, value?: number): void;
  /** Records one observation, seconds. */
  observe<N extends HistogramName>(name: N, labels: HistogramLabels<N>, seconds: number): void;
  /** Sets a gauge. */
  set<N extends GaugeName>(name: N, labels: GaugeLabels<N>, value: number): void;
  /**
   * Drops a gauge's series (a forgotten Alertmanager's), so label values stay bounded; adapters whose
   * series do not outlive a recording (EMF) need not.
   */
  forget?<N extends GaugeName>(name: N, labels: GaugeLabels<N>): void;
}

/** Records nothing (tests and callers that do not look at metrics). */
export const noMetrics: Metrics = { inc() {}, observe() {}, set() {} };
