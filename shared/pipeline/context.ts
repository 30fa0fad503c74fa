/**
 * What the pipeline's stages share: its dependencies ({@link PipelineDeps}), its answer
 * ({@link GroupResult}), and the per-group context ({@link GroupContext}) that `processGroup` builds
 * once the alerts are claimed, enriched and their acknowledgements read, so that a stage's signature
 * says what it may read.
 */
import type { AckTracker, AckView } from '../ack/tracker.js';
import type { Alert, WebhookMessage } from '../alertmanager/schema.js';
import type { AlertStateSource } from '../alert-state/types.js';
import type { Channel } from '../channels/channel.js';
import type { ChartLinkSettings } from '../chart/url.js';
import type { Logger } from '../core/logger.js';
import type { Enrichment } from '../enrich/types.js';
import type { Metrics } from '../metrics/catalogue.js';
import type { Flapping } from '../render/notification.js';
import type { RouteFn } from '../routing/router.js';
import type { Claim, DedupeStore, Seen } from '../store/dedupe.js';
import type { DeliveryLedger } from './record.js';

export interface PipelineDeps {
  store: DedupeStore;
  channels: Channel[];
  /** Enriches alerts; must never throw (see `enrichAlerts`). Keyed by `fingerprint`. */
  enrich(alerts: Alert[]): Promise<Map<string, Enrichment>>;
  /**
   * `budgetMs` (default 20 s) bounds the whole group, from receipt to the last channel's last
   * attempt: what claims and enrichment used is taken from the channels' budget (each channel
   * still gets at least one attempt of `timeoutMs`).
   */
  delivery: { timeoutMs: number; retries: number; budgetMs?: number };
  /** The channel names an alert goes to (the routing file); unset: every channel. */
  route?: RouteFn;
  /** Flap window, milliseconds (default {@link DEFAULT_FLAP_WINDOW_MS}; `0`: never mark flapping). */
  flapWindowMs?: number;
  logger: Logger;
  /** Epoch milliseconds. */
  now(): number;
  /** Acknowledgement links, alert state and escalation (`shared/ack`); unset: none of those. */
  ack?: AckTracker;
  /** Source of truth for candidate re-fires (`PROMETHEUS_URL`, `ALERTMANAGER_URL`); unset: every candidate is announced. */
  alertState?: AlertStateSource;
  /** The pipeline's own metrics (`shared/metrics`); unset: none recorded. */
  metrics?: Metrics;
  /** Signs each detailed alert's chart URL (`PUBLIC_URL`, `ACK_SECRET` and `PROMETHEUS_URL` set); unset: no charts. */
  charts?: ChartLinkSettings;
  /** `GRAFANA_URL`: messages link each alert to the dashboard there (`Notification.grafanaUrl`); unset: no such link. */
  grafanaUrl?: string;
}

/**
 * What one channel did with the group. `refused`: the platform refused the content, the reduced
 * rendering too (`deliver`); it is logged as an error naming the alerts and, being wrong forever,
 * does not make the answer 5xx (the claims are released: a later resend of the group tries again).
 */
export type ChannelOutcome =
  | { status: 'delivered'; alerts: number; attempts: number; durationMs: number }
  | { status: 'failed'; alerts: number; error: string; durationMs: number }
  | { status: 'refused'; alerts: number; error: string; durationMs: number };

export interface GroupResult {
  /** Alerts in the payload. */
  received: number;
  /** Alerts sent to at least one channel by this request (first notifications and repairs). */
  notified: number;
  /** Alerts every channel already had. */
  duplicates: number;
  /** Copies of a superseded state (a lagging HA peer, a late retry), not sent: see `shared/store/occurrence.ts`. */
  stale: number;
  /** Alerts another delivery is handling right now (an HA peer, a concurrent retry); the answer is then 503. */
  inFlight: number;
  /** Per channel that had something to send. */
  channels: Record<string, ChannelOutcome>;
  /**
   * False when a channel failed after its retries or an alert is in flight elsewhere: answer 5xx so
   * Alertmanager retries. A channel that `refused` the content does not make it false: a retry would
   * be refused again, forever.
   */
  ok: boolean;
}

export interface ClaimedAlert {
  alert: Alert;
  /** The channels its route selects. */
  channels: string[];
  claim: Claim;
  /** The store refused this alert's item: it is sent without dedupe, and nothing is written to its ledger. */
  unledgered?: true;
  /** What the group's batched read saw of the alert (`DedupeStore.readMany`), if it was read. */
  seen?: Seen;
}

/** One group on its way out, after claims, flapping, enrichment and the acknowledgement read. */
export interface GroupContext {
  readonly message: WebhookMessage;
  readonly deps: PipelineDeps;
  /** The group's logger: every line carries `groupKey` and `receiver`. */
  readonly log: Logger;
  /** When the request arrived, epoch milliseconds: the delivery budget counts from here. */
  readonly receivedAt: number;
  /** The alerts some channel still lacks, claimed and cut to what every platform takes. */
  readonly toSend: readonly ClaimedAlert[];
  /** By `fingerprint`; an alert not enriched (a storm's digest) is absent. */
  readonly enrichments: ReadonlyMap<string, Enrichment>;
  /** By `fingerprint`: the alerts firing again within the flap window. */
  readonly flapping: ReadonlyMap<string, Flapping>;
  /** Who acknowledged the alerts about to be sent; unset without `deps.ack`. */
  readonly ackView?: AckView;
  /** Each channel's success is written here as soon as it happens. */
  readonly ledger: DeliveryLedger;
}
