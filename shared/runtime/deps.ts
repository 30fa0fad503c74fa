/**
 * Wires the configuration to the adapters, once per process (Lambda cold start or `npm start`).
 * The only place that knows which concrete store, enricher and channels the app uses.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SNSClient } from '@aws-sdk/client-sns';
import type { SchedulerClient } from '@aws-sdk/client-scheduler';
import { createAckRuntime } from './ack.js';
import { createAlertStateSource } from './alert-state.js';
import { chartLinkSettings, chartRouteDeps } from './chart.js';
import type { AppDeps } from '../http/app.js';
import { buildChannels } from './channels.js';
import type { Config } from './config.js';
import { DynamoDbDedupeStore } from '../store/dedupe-dynamodb.js';
import { enrichAlerts } from '../enrich/index.js';
import type { Alert } from '../alertmanager/schema.js';
import type { HeartbeatState } from '../heartbeat/check.js';
import { heartbeatReceiver } from '../heartbeat/receive.js';
import { DynamoDbHeartbeatStore } from '../store/heartbeat.js';
import { noMetrics } from '../metrics/catalogue.js';
import type { Logger } from '../core/logger.js';
import type { Metrics } from '../metrics/catalogue.js';
import { createRouter } from '../routing/router.js';
import { DEFAULT_TABLE_NAME } from '../store/table.js';
import { DynamoDbSlackThreadStore } from '../store/slack-threads.js';


export interface RuntimeClients {
  dynamodb: DynamoDBClient;
  /** This process is the table's only writer (`npm start`'s embedded store): claims may be batched (`shared/store/start-many.ts`). */
  exclusiveTable?: boolean;
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
   * returned invocation is frozen; the Slack interaction then awaits its follow-ups before answering.
   */
  workAfterAnswer?: boolean;
}

/** The app's dependencies, and what the process must start besides serving requests. */
export interface RuntimeDeps extends AppDeps {
  /** Picks up escalations still scheduled in the table (`npm start`: call once at start). See `AckRuntime.resume`. */
  resumeEscalations(): Promise<{ scheduled: number; overdue: number }>;
}

/** Budget of the acknowledgement page's fresh Prometheus values, milliseconds (capped by `ENRICHMENT_TIMEOUT_MS`). */
const PAGE_REFRESH_TIMEOUT_MS = 3000;

/** Builds the app's dependencies from validated configuration and AWS clients. */
export function createDeps(config: Config, clients: RuntimeClients, logger: Logger): RuntimeDeps {
  const tableName = config.tableName ?? DEFAULT_TABLE_NAME;
  const slackThreads = new DynamoDbSlackThreadStore(clients.dynamodb, { tableName, ttlSeconds: config.dedupeTtlSeconds });
  const channels = buildChannels(config, { sns: clients.sns, write: clients.write, slackThreads, warn: (message, fields) => logger.warn(message, fields) });
  const ack = createAckRuntime(config, clients, channels, logger);
  const enrich = (alerts: Alert[], timeoutMs = config.enrichment.timeoutMs) =>
    enrichAlerts(alerts, {
      prometheusUrl: config.prometheusUrl,
      timeoutMs,
      memoryTrendWindowHours: config.enrichment.memoryTrendWindowHours,
      gpuMemoryCapacityMiB: config.enrichment.gpuMemoryCapacityMiB,
      memorySeries: config.enrichment.memorySeries,
      memorySeriesUnit: config.enrichment.memorySeriesUnit,
      queryTimeoutMs: config.enrichment.queryTimeoutMs,
      logger,
    });
  // The page's values now: the same enrichment, time-boxed shorter (someone is waiting for the page).
  const ackPage = ack.page && { ...ack.page, refresh: (alerts: Alert[]) => enrich(alerts, Math.min(config.enrichment.timeoutMs, PAGE_REFRESH_TIMEOUT_MS)) };
  const signingSecret = config.slackApp?.signingSecret;
  return {
    slackInteractions: signingSecret && ack.page && { ...ack.page, signingSecret, defer: clients.workAfterAnswer ? afterAnswer(logger) : undefined },
    heartbeat: config.heartbeat && heartbeatReceiver(config.heartbeat.alertname, new DynamoDbHeartbeatStore(clients.dynamodb, tableName), clients.metrics ?? noMetrics, () => Date.now(), logger),
    ack: ack.tracker,
    ackPage,
    store: new DynamoDbDedupeStore(clients.dynamodb, {
      tableName,
      ttlSeconds: config.dedupeTtlSeconds,
      leaseMs: config.dedupeLeaseMs,
      exclusive: clients.exclusiveTable === true,
    }),
    channels,
    enrich: (alerts) => enrich(alerts),
    delivery: config.delivery,
    // The routing file picks channels per alert; without one, every channel gets every alert.
    route: config.routing ? createRouter(config.routing.routes, config.routing.defaultChannels) : undefined,
    flapWindowMs: config.routing?.flapWindowMs,
    // Asked only for alerts firing again after their announced resolve (shared/pipeline/refire.ts).
    alertState: createAlertStateSource(config),
    logger,
    now: () => Date.now(),
    resumeEscalations: ack.resume,
    metrics: clients.metrics,
    charts: chartLinkSettings(config),
    chartRoutes: chartRouteDeps(config, logger),
    grafanaUrl: config.grafanaUrl,
  };
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
export function createHeartbeatCheck(config: Config, deps: AppDeps, clients: Pick<RuntimeClients, 'dynamodb' | 'metrics'>): (() => Promise<Record<string, HeartbeatState>>) | undefined {
  const settings = config.heartbeat;
  if (!settings) return undefined;
  const store = new DynamoDbHeartbeatStore(clients.dynamodb, config.tableName ?? DEFAULT_TABLE_NAME);
  // Loaded on the first check (the heartbeat schedule's own invocation in Lambda, a timer under npm start), never by a webhook.
  return async () => (await import('../http/off-webhook.js')).checkHeartbeats({ store, pipeline: deps, settings, metrics: clients.metrics ?? noMetrics, logger: deps.logger, now: deps.now });
}
