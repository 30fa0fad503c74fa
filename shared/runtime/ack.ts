/**
 * Wires `shared/ack` from the configuration, once per process: the store (in the dedupe table), the
 * link signer, the escalation targets and scheduler, the tracker the pipeline calls and the page's
 * dependencies. The only place that knows which concrete adapters acknowledgements use.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SchedulerClient } from '@aws-sdk/client-scheduler';
import type { LambdaClient } from '@aws-sdk/client-lambda';
import type { Channel } from '../channels/channel.js';
import { buildEscalationTargets, type ChannelDeps } from './channels.js';
import type { Config } from './config.js';
import type { Logger } from '../core/logger.js';
import { alertStores } from '../store/alert-stores.js';
import { DynamoDbFormNonceStore } from '../store/form-nonces.js';
import type { AlertStores } from '../store/alert-record.js';
import { DynamoDbAlertSetStore } from '../store/alert-set.js';
import type { EscalationDeps } from '../escalation/escalation.js';
import type { EventBridgeSchedulerSettings } from '../escalation/eventbridge-scheduler.js';
import { AckLinks } from '../ack/links.js';
import { chartLinkSettings } from './chart.js';
import { alertmanagerEndpoint } from './endpoints.js';
import { createPrometheusStateSource } from './alert-state.js';
import type { AckRouteDeps } from '../ack/routes.js';
import { TimerScheduler, type EscalationJob, type EscalationScheduler } from '../escalation/scheduler.js';
import { AckTracker } from '../ack/tracker.js';
import { AWS_CLIENT_DEFAULTS } from './aws-clients.js';
import { DEFAULT_TABLE_NAME } from '../store/table.js';
import type { Metrics } from '../metrics/catalogue.js';
import type { FollowUpTimers } from '../ack/follow-up-timers.js';
import { createFollowUps, type FollowUpWiring } from './follow-ups.js';
import { schedulesLoader, type LoadSchedules } from './schedules.js';
import { DynamoDbAckSetJobStore } from '../store/ack-set-jobs.js';
import type { AckSetDeps, AckSetDispatch } from '../ack/set-job.js';
import { ackSetStepEvent } from '../ack/set-step-event.js';

/** The table name used when `TABLE_NAME` is unset (must match `shared/runtime/deps.ts`). */

export interface AckClients {
  dynamodb: DynamoDBClient;
  /** For the escalation topic (`ChannelDeps.sns`); default: one for the topic's region, SDK retries off. */
  sns?: ChannelDeps['sns'];
  /** For EventBridge Scheduler; default: the SDK's own region settings. */
  scheduler?: Pick<SchedulerClient, 'send'>;
  /**
   * Whether escalation may run on in-process timers when no EventBridge Scheduler is wired.
   * Default true (`npm start`); false in Lambda, where a frozen or recycled function loses them.
   */
  inProcessTimers?: boolean;
  /** Where `follow_ups_total` and escalation targets' `notifications_total` are counted; unset: nowhere. */
  metrics?: Metrics;
  /**
   * How an alert set's acknowledgement runs its steps after the answer. Lambda: an asynchronous invocation
   * of this function per step (`functionName`: its own, as the invocation's context names it). Unset: in
   * this process, one step after the other (`npm start`).
   */
  ackSetSteps?: { functionName(): string; lambda?: Pick<LambdaClient, 'send'> };
  /**
   * Lambda: this function's unqualified ARN, as the invocation's context names it. Kept follow-ups' schedules
   * invoke it (`FOLLOW_UP_SCHEDULE_GROUP`…); unset (`npm start`, the escalation check): no such schedules.
   */
  functionArn?: () => string;
}

export interface AckRuntime {
  tracker: AckTracker;
  /** Present when `PUBLIC_URL` and `ACK_SECRET` are set. */
  page?: AckRouteDeps;
  /** Present when an escalation target is set: what the escalation check needs. */
  escalation?: EscalationDeps;
  /** The in-process scheduler, when escalation runs without EventBridge (stop it on shutdown). */
  timers?: TimerScheduler;
  /** The in-process timers of kept follow-ups (`npm start`; stop them on shutdown). */
  followUpTimers?: FollowUpTimers;
  /** Lambda with the follow-up scheduler wiring: one try of a kept follow-up (its schedule fired). See `FollowUpWiring.run`. */
  runFollowUp?: FollowUpWiring['run'];
  /**
   * Arms the in-process timers again for every escalation still `scheduled` in the table, and for every
   * follow-up still kept (call once at start: timers end with the process); overdue ones run at once.
   * No-op without in-process timers.
   * @returns how many were scheduled, and how many of them were already due
   * @throws the store's error
   */
  resume(): Promise<{ scheduled: number; overdue: number }>;
}

/**
 * @param channels the pipeline's channels (follow-ups go to those that carried an alert)
 * @param options.logger where the acknowledgement parts log
 * @param options.now clock, epoch milliseconds; default `Date.now`
 */
export function createAckRuntime(
  config: Config,
  clients: AckClients,
  channels: Channel[],
  { logger, now = Date.now }: { logger: Logger; now?: () => number },
): AckRuntime {
  const tableName = config.tableName ?? DEFAULT_TABLE_NAME;
  const stores = alertStores(clients.dynamodb, { tableName, ttlSeconds: config.dedupeTtlSeconds });
  const links = ackLinks(config, clients, logger);
  const named = escalationChannels(config, channels);
  const targets = [...buildEscalationTargets(config, { sns: clients.sns }), ...named];
  const escalation = escalationDeps(config, {
    ...{ stores, targets, channels, named, links, logger, now },
    metrics: clients.metrics,
  });
  const schedules = schedulesLoader(clients.scheduler);
  const { scheduler, timers } = escalationScheduling(escalation, config, { clients, schedules, logger, now });
  const delaySeconds = config.escalation?.delaySeconds;
  const tracker = new AckTracker({
    stores,
    links,
    escalation: scheduler && delaySeconds !== undefined ? { delaySeconds, scheduler } : undefined,
    logger,
    now,
  });
  const everyChannel = [...channels, ...targets.filter((t) => !named.includes(t))];
  const shared = { stores, channels: everyChannel, logger, now };
  const followUps = createFollowUps(clients, config, { ...shared, schedules, acknowledges: links !== undefined });
  const page = links && ackPage(config, clients, { ...shared, links, scheduler, followUps: followUps.followUps });
  const resume = async () => {
    await followUps.resume();
    return timers ? resumeEscalations(stores, timers, logger, now) : { scheduled: 0, overdue: 0 };
  };
  return { tracker, page, escalation, timers, followUpTimers: followUps.timers, runFollowUp: followUps.run, resume };
}

/** The acknowledgement links, when `ACK_SECRET` and `PUBLIC_URL` are set; a storm's alert set kept in the table. */
function ackLinks(config: Config, clients: AckClients, logger: Logger): AckLinks | undefined {
  if (!config.ackSecret || !config.publicUrl) return undefined;
  const keys = { current: config.ackSecret, previous: config.ackPreviousSecret };
  const sets = new DynamoDbAlertSetStore(clients.dynamodb, { tableName: config.tableName ?? DEFAULT_TABLE_NAME });
  return new AckLinks({ publicUrl: config.publicUrl, keys, ttlSeconds: config.ackTokenTtlSeconds }, sets, logger);
}

/** What the acknowledgement page, the platforms' buttons and an alert set's steps need. */
function ackPage(
  config: Config,
  clients: AckClients,
  parts: Pick<AckRouteDeps, 'stores' | 'links' | 'channels' | 'scheduler' | 'followUps' | 'logger' | 'now'>,
): AckRouteDeps {
  const tableName = config.tableName ?? DEFAULT_TABLE_NAME;
  const endpoint = alertmanagerEndpoint(config);
  const page: AckRouteDeps = {
    ...parts,
    formNonces: new DynamoDbFormNonceStore(clients.dynamodb, { tableName }),
    charts: chartLinkSettings(config),
    grafanaUrl: config.grafanaUrl,
    silences: endpoint && { alertmanager: endpoint, timeoutMs: config.delivery.timeoutMs },
    delivery: config.delivery,
  };
  page.setJobs = setJobs(page, clients, tableName);
  return page;
}

/** What escalation needs, built once; `undefined` when no escalation target is set. */
function escalationDeps(
  config: Config,
  parts: Pick<EscalationDeps, 'stores' | 'targets' | 'links' | 'logger' | 'now' | 'metrics'> & {
    channels: Channel[];
    /** Channel instances named as targets (`ESCALATION_CHANNELS`): their own routes' threads, not another. */
    named: Channel[];
  },
): EscalationDeps | undefined {
  if (!parts.targets.length) return undefined;
  const endpoint = alertmanagerEndpoint(config);
  const { channels, named, ...deps } = parts;
  return {
    ...deps,
    threaded: channels.filter((c) => c.threaded && !named.includes(c)),
    delivery: config.delivery,
    alertState: createPrometheusStateSource(config, parts.now),
    alertmanager: endpoint && { ...endpoint, timeoutMs: config.delivery.timeoutMs },
    grafanaUrl: config.grafanaUrl,
    metrics: parts.metrics,
  };
}

/**
 * Where escalation checks are scheduled: EventBridge Scheduler when the stack wired it, in-process timers
 * under `npm start`, nowhere in a Lambda without the wiring (said once, at cold start).
 */
function escalationScheduling(
  escalation: EscalationDeps | undefined,
  config: Config,
  deps: { clients: AckClients; schedules: LoadSchedules; logger: Logger; now: () => number },
): { scheduler?: EscalationScheduler; timers?: TimerScheduler } {
  const { logger, now } = deps;
  const wiring = config.escalation?.scheduler;
  if (!escalation) return {};
  if (wiring) return { scheduler: eventBridgeScheduler(deps.schedules, wiring) };
  if (deps.clients.inProcessTimers === false) {
    logger.warn('escalation off', {
      reason:
        'no EventBridge Scheduler wiring (deploy with -c escalationDelaySeconds=...): in-process timers would not survive a frozen Lambda',
    });
    return {};
  }
  const timers = new TimerScheduler(
    // The check is loaded when a timer first fires, minutes after any webhook: not at start.
    async (job) => void (await (await import('../http/off-webhook.js')).checkEscalation(job, escalation)),
    (job, error, retryAtMs) =>
      logger.error('escalation check failed', {
        ...job,
        error,
        retryAt: retryAtMs === undefined ? 'none (given up until the next start)' : new Date(retryAtMs).toISOString(),
      }),
    now,
  );
  return { scheduler: timers, timers };
}

/**
 * The channels `ESCALATION_CHANNELS` names (`config.escalation.channels`), as built for the routes: the
 * escalation reaches each as its routed alerts do (its ledger name, threads, cards), and so do its follow-ups;
 * a thread-keeping one gets it as a target, not a second time as a thread to update.
 * @throws Error when a name has no channel (the configuration checked every name against the instances)
 */
function escalationChannels(config: Config, channels: Channel[]): Channel[] {
  return (config.escalation?.channels ?? []).map((name) => {
    const channel = channels.find((c) => c.name === name);
    if (!channel) throw new Error(`ESCALATION_CHANNELS: no channel named "${name}"`);
    return channel;
  });
}

/** Arms `timers` again for every escalation still scheduled in the table (see `AckRuntime.resume`). */
async function resumeEscalations(
  stores: AlertStores,
  timers: TimerScheduler,
  logger: Logger,
  now: () => number,
): Promise<{ scheduled: number; overdue: number }> {
  const pending = await stores.escalations.scheduled(now());
  const at = now();
  for (const p of pending) await timers.schedule({ fingerprint: p.fingerprint, startsAt: p.startsAt }, p.dueAtMs);
  const report = { scheduled: pending.length, overdue: pending.filter((p) => p.dueAtMs <= at).length };
  logger.info('escalations resumed', report);
  return report;
}

/** Escalation checks as EventBridge Scheduler one-time schedules, their code loaded on the first schedule or cancel. */
function eventBridgeScheduler(load: LoadSchedules, wiring: EventBridgeSchedulerSettings): EscalationScheduler {
  const scheduler = async () => {
    const [{ EventBridgeScheduler }, schedules] = await Promise.all([
      import('../escalation/eventbridge-scheduler.js'),
      load(wiring),
    ]);
    return new EventBridgeScheduler(schedules);
  };
  return {
    schedule: async (job: EscalationJob, dueAtMs: number) => (await scheduler()).schedule(job, dueAtMs),
    cancel: async (job: EscalationJob) => (await scheduler()).cancel(job),
  };
}

/**
 * The alert sets' jobs: the store, and how a job's next step runs (see {@link AckClients.ackSetSteps}). The
 * step's code (`set-job.ts`) is loaded on the first step, not at cold init.
 */
function setJobs(page: AckRouteDeps, clients: AckClients, tableName: string): NonNullable<AckRouteDeps['setJobs']> {
  const jobs = new DynamoDbAckSetJobStore(clients.dynamodb, { tableName });
  const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
  let dispatch: AckSetDispatch;
  const deps = (): AckSetDeps => ({ ...page, sets: page.links.sets, jobs, dispatch, sleep });
  const steps = clients.ackSetSteps;
  if (steps) {
    let lambda = steps.lambda;
    dispatch = async (jobId) => {
      const { InvokeCommand, LambdaClient } = await import('@aws-sdk/client-lambda');
      lambda ??= new LambdaClient(AWS_CLIENT_DEFAULTS);
      const payload = new TextEncoder().encode(JSON.stringify(ackSetStepEvent(jobId)));
      await lambda.send(
        new InvokeCommand({ FunctionName: steps.functionName(), InvocationType: 'Event', Payload: payload }),
      );
    };
  } else {
    dispatch = async (jobId) => {
      const { inProcessDispatch, runSetStep } = await import('../http/off-webhook.js');
      await inProcessDispatch((id) => runSetStep(id, deps()), { logger: page.logger })(jobId);
    };
  }
  return { jobs, dispatch, sleep, deps };
}
