/**
 * Wires the configuration to the adapters, once per process (Lambda cold start or `npm start`).
 * The only place that knows which concrete store, enricher and channels the app uses.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SNSClient } from '@aws-sdk/client-sns';
import type { SchedulerClient } from '@aws-sdk/client-scheduler';
import { createAckRuntime, type AckClients, type AckRuntime } from './ack.js';
import { createAlertStateSource } from './alert-state.js';
import { chartLinkSettings, chartRouteDeps } from './chart.js';
import type { AppDeps } from '../http/app.js';
import { buildChannels, snsClientsByRegion, type ChannelDeps } from './channels.js';
import type { Config } from './config.js';
import { DynamoDbDedupeStore } from '../store/dedupe-dynamodb.js';
import { enrichAlerts } from '../enrich/index.js';
import type { Alert } from '../alertmanager/schema.js';
import type { Channel } from '../channels/channel.js';
import type { HeartbeatState } from '../heartbeat/check.js';
import { heartbeatReceiver } from '../heartbeat/receive.js';
import { DynamoDbHeartbeatStore } from '../store/heartbeat.js';
import { noMetrics } from '../metrics/catalogue.js';
import { setTimeZone } from '../render/format.js';
import type { Logger } from '../core/logger.js';
import type { Metrics } from '../metrics/catalogue.js';
import { createMentionRouter, createRouter } from '../routing/router.js';
import { DEFAULT_TABLE_NAME } from '../store/table.js';
import { DynamoDbSlackThreadStore } from '../store/slack-threads.js';
import { DynamoDbPagerDutyStormStore } from '../store/pagerduty-storms.js';
import { DynamoDbFeishuCardStore } from '../store/feishu-cards.js';
import { DynamoDbCallbackEventStore } from '../store/callback-events.js';
import { feishuAppClient } from '../channels/feishu/app-settings.js';

export interface RuntimeClients {
  dynamodb: DynamoDBClient;
  /** Injected in tests; created from the topic ARN's region otherwise. */
  sns?: SNSClient;
  /** Where the console channel writes (default stdout). */
  write?: (text: string) => void;
  /** EventBridge Scheduler client for escalation checks; created when the stack's scheduler settings are set. */
  scheduler?: Pick<SchedulerClient, 'send'>;
  /** Whether escalation may run on in-process timers without EventBridge Scheduler (default true; Lambda: false). */
  inProcessTimers?: boolean;
  /** Where the pipeline's own metrics go: prom-client for `npm start`, EMF in Lambda; unset: nowhere. */
  metrics?: Metrics;
  /**
   * Whether work may go on after a response is sent (`npm start`: true). Lambda: false (default), a
   * returned invocation is frozen; the Slack and Feishu buttons then await their follow-ups before answering.
   */
  workAfterAnswer?: boolean;
  /** Lambda: an alert set's steps run as asynchronous invocations of this function (`AckClients.ackSetSteps`). */
  ackSetSteps?: AckClients['ackSetSteps'];
  /** Lambda: this function's unqualified ARN, which kept follow-ups' schedules invoke (`AckClients.functionArn`). */
  functionArn?: AckClients['functionArn'];
}

/** The app's dependencies, and what the process must start besides serving requests. */
export interface RuntimeDeps extends AppDeps {
  /**
   * Checks the Feishu app's credentials and domain once (a token request), for a start-up log line;
   * resolves to the problem, or `undefined` when the app can send. Unset: no Feishu app.
   */
  checkFeishuApp?: () => Promise<string | undefined>;
  /** Picks up escalations still scheduled in the table (`npm start`: call once at start). See `AckRuntime.resume`. */
  resumeEscalations(): Promise<{ scheduled: number; overdue: number }>;
  /** Lambda with the follow-up scheduler wiring: one try of a kept follow-up, its schedule's event `{followUp}`. */
  runFollowUp?: AckRuntime['runFollowUp'];
}

/** Budget of the acknowledgement page's fresh Prometheus values, milliseconds (capped by `ENRICHMENT_TIMEOUT_MS`). */
const PAGE_REFRESH_TIMEOUT_MS = 3000;

/** Builds the app's dependencies from validated configuration and AWS clients. */
export function createDeps(config: Config, clients: RuntimeClients, logger: Logger): RuntimeDeps {
  // Every time shown from here on (messages, pages, charts) is in TIME_ZONE.
  setTimeZone(config.timeZone);
  const wiring: Wiring = { config, clients, logger, tableName: config.tableName ?? DEFAULT_TABLE_NAME };
  // One SNS client per region for the channels and the escalation targets.
  const sns = clients.sns ?? snsClientsByRegion();
  const { channels, feishuContacts } = channelsOf(wiring, sns);
  const ack = createAckRuntime(config, { ...clients, sns }, channels, { logger });
  const enrich = enricher(config, logger);
  return {
    ...clickRoutes(wiring, ack.page, feishuContacts),
    heartbeat: heartbeatOf(wiring),
    ack: ack.tracker,
    alerts: ack.tracker.stores,
    // The page's values now: the same enrichment, time-boxed shorter (someone is waiting for the page).
    ackPage: ack.page && {
      ...ack.page,
      refresh: (alerts: Alert[]) => enrich(alerts, Math.min(config.enrichment.timeoutMs, PAGE_REFRESH_TIMEOUT_MS)),
    },
    store: new DynamoDbDedupeStore(clients.dynamodb, {
      tableName: wiring.tableName,
      ttlSeconds: config.dedupeTtlSeconds,
      leaseMs: config.dedupeLeaseMs,
    }),
    channels,
    enrich: (alerts) => enrich(alerts),
    delivery: config.delivery,
    ...routingOf(config),
    // Asked only for alerts firing again after their announced resolve (shared/pipeline/refire.ts).
    alertState: createAlertStateSource(config),
    logger,
    now: () => Date.now(),
    resumeEscalations: ack.resume,
    runFollowUp: ack.runFollowUp,
    metrics: clients.metrics,
    charts: chartLinkSettings(config),
    chartRoutes: chartRouteDeps(config, logger),
    grafanaUrl: config.grafanaUrl,
  };
}

/**
 * The configured channels exactly as {@link createDeps} builds them (the same instances, names and stores
 * of their threads, cards and storms in the table), for a process that only sends: the escalation check.
 * @param clients `sns`: one client per region ({@link snsClientsByRegion}), shared with the escalation targets
 * Sets `TIME_ZONE` for every time the channels render, as {@link createDeps} does.
 * @throws Error when an SNS topic ARN has no region field
 */
export function createChannels(
  config: Config,
  clients: { dynamodb: DynamoDBClient; sns: NonNullable<ChannelDeps['sns']> },
  logger: Logger,
): Channel[] {
  setTimeZone(config.timeZone);
  const tableName = config.tableName ?? DEFAULT_TABLE_NAME;
  return channelsOf({ config, clients: { dynamodb: clients.dynamodb }, logger, tableName }, clients.sns).channels;
}

/**
 * The routing file's choice of channels and mentions per alert, its flap window, and the instances escalation also
 * reaches (`ESCALATION_CHANNELS`, whose resolve follows); without a routing file, every channel gets every alert.
 */
function routingOf(config: Config): Pick<RuntimeDeps, 'route' | 'mentions' | 'flapWindowMs' | 'escalationChannels'> {
  return {
    escalationChannels: config.escalation?.channels,
    route: config.routing ? createRouter(config.routing.routes, config.routing.defaultChannels) : undefined,
    mentions: config.routing && createMentionRouter(config.routing.routes),
    flapWindowMs: config.routing?.flapWindowMs,
  };
}

/** What the parts of {@link createDeps} are built from. */
interface Wiring {
  config: Config;
  clients: RuntimeClients;
  logger: Logger;
  /** `TABLE_NAME`, or the default. */
  tableName: string;
}

/** The configured channels, with the stores of their threads, cards and storms in the table; and the Feishu app's client. */
function channelsOf({ config, clients, logger, tableName }: Wiring, sns: NonNullable<ChannelDeps['sns']>) {
  const ttlSeconds = config.dedupeTtlSeconds;
  const feishuOptions = config.channelOptions['feishu-app'];
  const feishuContacts = feishuOptions && feishuAppClient(feishuOptions);
  const feishuApp = feishuContacts && {
    contacts: feishuContacts,
    cards: new DynamoDbFeishuCardStore(clients.dynamodb, { tableName, ttlSeconds }),
  };
  const channels = buildChannels(config, {
    sns,
    write: clients.write,
    slackThreads: new DynamoDbSlackThreadStore(clients.dynamodb, { tableName, ttlSeconds }),
    feishuApp,
    pagerDutyStorms: new DynamoDbPagerDutyStormStore(clients.dynamodb, { tableName, ttlSeconds }),
    warn: (message, fields) => logger.warn(message, fields),
  });
  return { channels, feishuContacts };
}

/** Enrichment as configured; `timeoutMs` the budget of one call (default `ENRICHMENT_TIMEOUT_MS`). */
function enricher(config: Config, logger: Logger) {
  return (alerts: Alert[], timeoutMs = config.enrichment.timeoutMs) =>
    enrichAlerts(alerts, {
      prometheusUrl: config.prometheusUrl,
      prometheusCredentials: config.prometheusCredentials,
      timeoutMs,
      memoryTrendWindowHours: config.enrichment.memoryTrendWindowHours,
      gpuMemoryCapacityMiB: config.enrichment.gpuMemoryCapacityMiB,
      memorySeries: config.enrichment.memorySeries,
      memorySeriesUnit: config.enrichment.memorySeriesUnit,
      queryTimeoutMs: config.enrichment.queryTimeoutMs,
      logger,
    });
}

/**
 * What the platforms' clicks need (Feishu's card callback, Slack's interactions; each with the page's
 * dependencies), and the start-up check of the Feishu app's credentials.
 */
function clickRoutes(
  { config, clients, logger, tableName }: Wiring,
  page: AckRuntime['page'],
  feishuContacts: ReturnType<typeof feishuAppClient> | undefined,
): Pick<RuntimeDeps, 'checkFeishuApp' | 'feishuCallback' | 'slackInteractions'> {
  const signingSecret = config.channelOptions['slack-app']?.signingSecret;
  const defer = clients.workAfterAnswer ? afterAnswer(logger) : undefined;
  const feishu = config.channelOptions['feishu-app'];
  return {
    checkFeishuApp:
      feishuContacts &&
      (() =>
        feishuContacts.api.checkCredentials(AbortSignal.timeout(config.delivery.timeoutMs)).then(
          () => undefined,
          (err: Error) => err.message,
        )),
    feishuCallback: feishu &&
      feishuContacts &&
      page && {
        ...page,
        appId: feishu.appId,
        encryptKey: feishu.encryptKey,
        verificationToken: feishu.verificationToken,
        events: new DynamoDbCallbackEventStore(clients.dynamodb, tableName),
        contacts: feishuContacts,
        defer,
      },
    slackInteractions: signingSecret && page && { ...page, signingSecret, defer },
  };
}

/** The heartbeats' receiver, when the dead-man's switch is on (`HEARTBEAT_ALERTNAME`). */
function heartbeatOf({ config, clients, logger, tableName }: Wiring): RuntimeDeps['heartbeat'] {
  return (
    config.heartbeat &&
    heartbeatReceiver({
      recognition: config.heartbeat,
      store: new DynamoDbHeartbeatStore(clients.dynamodb, tableName, config.heartbeat.maxClusters),
      metrics: clients.metrics ?? noMetrics,
      now: () => Date.now(),
      logger,
    })
  );
}

/** Runs a task after the response went out; its failure is logged (it has nobody else to tell). */
function afterAnswer(logger: Logger): (task: () => Promise<void>) => void {
  return (task) => {
    void task().catch((error: Error) => logger.error('work after answer failed', { error }));
  };
}

/**
 * The dead-man's switch check over the app's pipeline (run by a timer under `npm start`, by an
 * EventBridge Scheduler event in Lambda).
 * @returns `undefined` when heartbeats are off (`HEARTBEAT_ALERTNAME=""`)
 */
export function createHeartbeatCheck(
  config: Config,
  deps: AppDeps,
  clients: Pick<RuntimeClients, 'dynamodb' | 'metrics'>,
): (() => Promise<Record<string, HeartbeatState>>) | undefined {
  const settings = config.heartbeat;
  if (!settings) return undefined;
  const store = new DynamoDbHeartbeatStore(
    clients.dynamodb,
    config.tableName ?? DEFAULT_TABLE_NAME,
    settings.maxClusters,
  );
  // Loaded on the first check (the heartbeat schedule's own invocation in Lambda, a timer under npm start), never by a webhook.
  return async () =>
    (await import('../http/off-webhook.js')).checkHeartbeats({
      store,
      pipeline: deps,
      settings,
      metrics: clients.metrics ?? noMetrics,
      logger: deps.logger,
      now: deps.now,
    });
}
