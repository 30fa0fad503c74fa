/**
 * What the pipeline's stages share: its dependencies ({@link PipelineDeps}), the per-group context each
 * stage takes and adds its result to ({@link GroupContext}), and the answer ({@link GroupResult}).
 *
 * The context is the one owner of what a group's stages remember: nothing a stage computes for a group
 * outlives it in a module-level cache. A new stage adds its result here, under the stage that writes it.
 */
import type { Locale } from '../core/locale.js';
import type { AckTracker, AckView } from '../ack/tracker.js';
import type { Alert, WebhookMessage } from '../alertmanager/schema.js';
import type { AlertStateSource } from '../alert-state/types.js';
import type { Channel } from '../channels/channel.js';
import type { ChartLinkSettings } from '../chart/url.js';
import type { Logger } from '../core/logger.js';
import type { EnrichedAlert, Enrichment } from '../enrich/types.js';
import type { Metrics } from '../metrics/catalogue.js';
import type { Flapping } from '../render/notification.js';
import { cutOversized } from '../render/reduce.js';
import type { MentionFn, RouteFn } from '../routing/router.js';
import type { AlertStores, HistoryBatch, RecordWrite } from '../store/alert-record.js';
import type { Claim, DedupeStore } from '../store/dedupe.js';
import type { FlapRun, Seen } from '../store/seen.js';

export interface PipelineDeps {
  /** The dedupe ledger (claims). */
  store: DedupeStore;
  /** The alert records and their history, written by the record stage. */
  alerts: Pick<AlertStores, 'records' | 'history'>;
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
  /**
   * `ESCALATION_CHANNELS`: channel instances an escalation reached beside the alert's routes; an alert's resolve
   * goes to those its record lists too (whoever was paged hears it is over). Unset: none.
   */
  escalationChannels?: readonly string[];
  /** Who a channel @-mentions for an alert (the routing file's routes' `mention`); unset: nobody by route. */
  mentions?: MentionFn;
  /** Flap window, milliseconds (default 30 min, `DEFAULT_FLAP_WINDOW_MS`; `0`: never mark flapping). */
  flapWindowMs?: number;
  logger: Logger;
  /** Epoch milliseconds. */
  now(): number;
  /**
   * Resolves after `ms` milliseconds: the wait between a channel's delivery attempts, its budget then kept on
   * {@link PipelineDeps.now} (`DeliveryClock` of `shared/channels/deliver.ts`); unset: Node's timers, the budget
   * on the wall clock.
   */
  sleep?(ms: number): Promise<void>;
  /** Acknowledgement links, who acknowledged, and escalation (`shared/ack`); unset: none of those. */
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
  /** `mayHaveBeenDelivered`: an attempt timed out after the platform had the whole message (`DeliveryError.outcomeUnknown`). */
  | { status: 'failed'; alerts: number; error: string; durationMs: number; mayHaveBeenDelivered?: true }
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

/** An enrichment begun before the claims returned: of which alerts (the group's cut copies), and its result. */
export interface EarlyEnrichment {
  readonly alerts: readonly Alert[];
  readonly result: Promise<Map<string, Enrichment>>;
}

/** The group's delivery ledger (`ledger.ts`): each channel's success recorded as soon as it happens. */
export interface Ledger {
  /** Records, in the background, that `channel` accepted the alerts of `claimed`. */
  delivered(claimed: readonly ClaimedAlert[], channel: string): void;
  /** Waits for every write; returns the event keys whose write failed. */
  settle(): Promise<Set<string>>;
}

/** One group on its way through the stages; each field says which stage writes it. */
export class GroupContext {
  /** The group's logger: every line carries `groupKey` and `receiver`. */
  readonly log: Logger;
  /** When the request arrived, epoch milliseconds: the delivery budget counts from here. */
  readonly receivedAt: number;
  /** Each alert's copy cut to what every platform takes (`cutOversized`), made once: early enrichment and fan-out share it. */
  readonly #cut = new Map<Alert, Alert>();

  /** claim, then refire: every alert of the payload with its settled claim. */
  claimed: ClaimedAlert[] = [];
  /** claim: enrichment begun before the claims returned, for the enrich stage to use or drop. */
  early?: EarlyEnrichment;
  /** refire: the alerts some channel still lacks, cut. */
  toSend: ClaimedAlert[] = [];
  /** flap: the firing alerts' flap runs (the record stage stores them), and those that flap, by `fingerprint`. */
  runs = new Map<string, FlapRun>();
  flapping = new Map<string, Flapping>();
  /** enrich: by `fingerprint`; an alert not enriched is absent. Who acknowledged (unset without `deps.ack`). */
  enrichments: ReadonlyMap<string, Enrichment> = new Map();
  ackView?: AckView;
  /** fan out: what each channel did, in `deps.channels` order (none when it had nothing to send). */
  outcomes: { channel: string; outcome?: ChannelOutcome }[] = [];
  /** fan out: each alert as messages show it, detailed or listed, built once for all channels. */
  readonly shown = new Map<ClaimedAlert, Partial<Record<`detailed ${Locale}` | 'listed', EnrichedAlert>>>();
  /**
   * record: the records written during fan-out (an alert every channel accepted: its record carries the
   * delivery mark), by event key, and the group's history events, written together at the end.
   */
  readonly recorded = { written: new Map<string, RecordWrite | undefined>(), history: { items: [] } as HistoryBatch };
  /** fan out → settle: each channel's success is written here as soon as it happens. */
  readonly ledger: Ledger;

  /**
   * @param message the webhook message, one entry per `fingerprint`
   * @param ledger makes the group's ledger (`groupLedger`, `ledger.ts`)
   * @param received the alerts in the payload as it came (repeats of a fingerprint included)
   */
  constructor(
    readonly message: WebhookMessage,
    readonly deps: PipelineDeps,
    ledger: (group: GroupContext) => Ledger,
    readonly received = message.alerts.length,
  ) {
    this.receivedAt = deps.now();
    this.log = deps.logger.child({ groupKey: message.groupKey, receiver: message.receiver });
    this.ledger = ledger(this);
  }

  /** The alert cut to what every platform takes (once per alert object). */
  cut(alert: Alert): Alert {
    const known = this.#cut.get(alert);
    if (known) return known;
    const copy = cutOversized(alert, this.log);
    this.#cut.set(alert, copy);
    return copy;
  }

  /** The answer, once every stage ran. */
  result(): GroupResult {
    const count = (d: Claim['decision']) => this.claimed.filter((c) => c.claim.decision === d).length;
    const channels = Object.fromEntries(this.outcomes.flatMap((o) => (o.outcome ? [[o.channel, o.outcome]] : [])));
    const failed = this.outcomes.some((o) => o.outcome?.status === 'failed');
    const inFlight = count('in flight');
    return {
      received: this.received,
      notified: this.toSend.length,
      duplicates: count('already notified'),
      stale: count('stale copy'),
      inFlight,
      channels,
      // In flight is not done: if the holder dies, only Alertmanager's retry delivers those alerts.
      ok: !failed && inFlight === 0,
    };
  }
}
