/**
 * Wires `shared/ack` from the configuration, once per process: the store (in the dedupe table), the
 * link signer, the escalation targets and scheduler, the tracker the pipeline calls and the page's
 * dependencies. The only place that knows which concrete adapters acknowledgements use.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SchedulerClient } from '@aws-sdk/client-scheduler';
import { SNSClient } from '@aws-sdk/client-sns';
import { createSlackChannel } from '../channels/slack/index.js';
import { createSnsChannel, regionFromTopicArn } from '../channels/sns/index.js';
import type { Channel } from '../channels/channel.js';
import type { Config } from './config.js';
import type { Logger } from '../core/logger.js';
import { DynamoDbAlertRecordStore } from '../store/alert-record-dynamodb.js';
import { DynamoDbAlertSetStore } from '../store/alert-set.js';
import type { EscalationDeps } from '../escalation/escalation.js';
import type { EventBridgeSchedulerSettings } from '../escalation/eventbridge-scheduler.js';
import { AckLinks } from '../ack/links.js';
import { chartLinkSettings } from './chart.js';
import type { AckRouteDeps } from '../ack/routes.js';
import { TimerScheduler, type EscalationJob, type EscalationScheduler } from '../escalation/scheduler.js';
import { AckTracker } from '../ack/tracker.js';
import { AWS_CLIENT_DEFAULTS } from './aws-clients.js';
import { DEFAULT_TABLE_NAME } from '../store/table.js';

/** The table name used when `TABLE_NAME` is unset (must match `shared/runtime/deps.ts`). */

export interface AckClients {
  dynamodb: DynamoDBClient;
  /** This process is the table's only writer (the embedded store): record writes may be batched. */
  exclusiveTable?: boolean;
  /** For the escalation topic; default: one for the topic's region, SDK retries off. */
  sns?: SNSClient;
  /** For EventBridge Scheduler; default: the SDK's own region settings. */
  scheduler?: Pick<SchedulerClient, 'send'>;
  /**
   * Whether escalation may run on in-process timers when no EventBridge Scheduler is wired.
   * Default true (`npm start`); false in Lambda, where a frozen or recycled function loses them.
   */
  inProcessTimers?: boolean;
}

export interface AckRuntime {
  tracker: AckTracker;
  /** Present when `PUBLIC_URL` and `ACK_SECRET` are set. */
  page?: AckRouteDeps;
  /** Present when an escalation target is set: what the escalation check needs. */
  escalation?: EscalationDeps;
  /** The in-process scheduler, when escalation runs without EventBridge (stop it on shutdown). */
  timers?: TimerScheduler;
  /**
   * Arms the in-process timers again for every escalation still `scheduled` in the table (call once at
   * start: timers end with the process); overdue ones run at once. No-op without in-process timers.
   * @returns how many were scheduled, and how many of them were already due
   * @throws the store's error
   */
  resume(): Promise<{ scheduled: number; overdue: number }>;
}

/** The escalation target channels, second instances of SNS and Slack named `escalation-sns` and `escalation-slack` in the ledger. */
export function escalationTargets(config: Config, sns?: SNSClient): Channel[] {
  const e = config.escalation;
  if (!e) return [];
  const targets: Channel[] = [];
  if (e.snsTopicArn) {
    const client = sns ?? new SNSClient({ region: regionFromTopicArn(e.snsTopicArn), maxAttempts: 1 });
    targets.push(createSnsChannel({ name: 'escalation-sns', client, topicArn: e.snsTopicArn }));
  }
  if (e.slackWebhookUrl) targets.push(createSlackChannel({ name: 'escalation-slack', webhookUrl: e.slackWebhookUrl }));
  return targets;
}

/**
 * @param channels the pipeline's channels (follow-ups go to those that carried an alert)
 * @param now clock, epoch milliseconds
 */
export function createAckRuntime(config: Config, clients: AckClients, channels: Channel[], logger: Logger, now: () => number = Date.now): AckRuntime {
  const store = new DynamoDbAlertRecordStore(clients.dynamodb, { tableName: config.tableName ?? DEFAULT_TABLE_NAME, ttlSeconds: config.dedupeTtlSeconds, exclusive: clients.exclusiveTable === true, warn: (message, fields) => logger.warn(message, fields) });
  const keys = config.ackSecret ? { current: config.ackSecret, previous: config.ackPreviousSecret } : undefined;
  const sets = new DynamoDbAlertSetStore(clients.dynamodb, { tableName: config.tableName ?? DEFAULT_TABLE_NAME });
  const links = keys && config.publicUrl ? new AckLinks({ publicUrl: config.publicUrl, keys, ttlSeconds: config.ackTokenTtlSeconds }, sets, logger) : undefined;
  const targets = escalationTargets(config, clients.sns);
  const alertmanager = config.alertmanagerUrl ? { url: config.alertmanagerUrl, timeoutMs: config.delivery.timeoutMs } : undefined;
  const escalation: EscalationDeps | undefined = targets.length ? { store, targets, threaded: channels.filter((c) => c.threaded), links, delivery: config.delivery, alertmanager, grafanaUrl: config.grafanaUrl, logger, now } : undefined;

  let scheduler: EscalationScheduler | undefined;
  let timers: TimerScheduler | undefined;
  const wiring = config.escalation?.scheduler;
  if (escalation && wiring) {
    scheduler = eventBridgeScheduler(clients.scheduler, wiring);
  } else if (escalation && clients.inProcessTimers === false) {
    logger.warn('escalation off', { reason: 'no EventBridge Scheduler wiring (deploy with -c escalationDelaySeconds=...): in-process timers would not survive a frozen Lambda' });
  } else if (escalation) {
    timers = new TimerScheduler(
      // The check is loaded when a timer first fires, minutes after any webhook: not at start.
      async (job) => void (await (await import('../http/off-webhook.js')).checkEscalation(job, escalation)),
      (job, error, retryAtMs) => logger.error('escalation check failed', { ...job, error, retryAt: retryAtMs === undefined ? 'none (given up until the next start)' : new Date(retryAtMs).toISOString() }),
      now,
    );
    scheduler = timers;
  }

  const tracker = new AckTracker({ store, links, escalation: scheduler && config.escalation ? { delaySeconds: config.escalation.delaySeconds, scheduler } : undefined, logger, now });
  const page: AckRouteDeps | undefined = links && {
    store,
    links,
    charts: chartLinkSettings(config),
    grafanaUrl: config.grafanaUrl,
    channels: [...channels, ...targets],
    silences: config.alertmanagerUrl ? { alertmanagerUrl: config.alertmanagerUrl, timeoutMs: config.delivery.timeoutMs } : undefined,
    scheduler,
    delivery: config.delivery,
    logger,
    now,
  };
  const resume = async () => {
    if (!timers) return { scheduled: 0, overdue: 0 };
    const pending = await store.scheduledEscalations(now());
    const at = now();
    for (const p of pending) await timers.schedule({ fingerprint: p.fingerprint, startsAt: p.startsAt }, p.dueAtMs);
    const report = { scheduled: pending.length, overdue: pending.filter((p) => p.dueAtMs <= at).length };
    logger.info('escalations resumed', report);
    return report;
  };
  return { tracker, page, escalation, timers, resume };
}

/**
 * EventBridge Scheduler, its SDK client and commands imported on the first schedule or cancel (an
 * alert that may escalate), not at cold init: a webhook of warnings or duplicates never needs them.
 */
function eventBridgeScheduler(client: Pick<SchedulerClient, 'send'> | undefined, wiring: EventBridgeSchedulerSettings): EscalationScheduler {
  let loading: Promise<EscalationScheduler> | undefined;
  const load = () => {
    loading ??= Promise.all([import('../escalation/eventbridge-scheduler.js'), client ? undefined : import('@aws-sdk/client-scheduler')])
      .then(([{ EventBridgeScheduler }, sdk]) => new EventBridgeScheduler(client ?? new sdk!.SchedulerClient(AWS_CLIENT_DEFAULTS), wiring))
      .catch((err: unknown) => {
        loading = undefined;
        throw err;
      });
    return loading;
  };
  return {
    schedule: async (job: EscalationJob, dueAtMs: number) => (await load()).schedule(job, dueAtMs),
    cancel: async (job: EscalationJob) => (await load()).cancel(job),
  };
}
