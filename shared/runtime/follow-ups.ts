/**
 * Wires durable follow-ups (`shared/ack/follow-ups.ts`) once per process: the follow-up store in the
 * dedupe table, the channels they replay to, the metric, and where their retries are scheduled:
 * in-process timers under `npm start`; in Lambda (a frozen function loses timers) one EventBridge
 * Scheduler one-time schedule per try, invoking this function with `{followUp: id}`
 * (`FOLLOW_UP_SCHEDULE_GROUP`…, set by the CDK stack). In Lambda without those settings a failed
 * follow-up stays a failure, as before, and the cold start says so once.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Channel } from '../channels/channel.js';
import type { Logger } from '../core/logger.js';
import { FollowUpTimers } from '../ack/follow-up-timers.js';
import { FOLLOW_UP_RETRY, FollowUps, type FollowUpDeps, type FollowUpScheduler } from '../ack/follow-ups.js';
import type { Metrics } from '../metrics/catalogue.js';
import type { AlertStores } from '../store/alert-record.js';
import { DynamoDbFollowUpStore } from '../store/follow-ups.js';
import { DEFAULT_TABLE_NAME } from '../store/table.js';
import type { Config } from './config.js';
import type { OneTimeSchedules } from '../escalation/eventbridge-scheduler.js';
import type { LoadSchedules } from './schedules.js';

export interface FollowUpWiring {
  followUps?: FollowUps;
  /** The in-process timers, when follow-ups run on them (stop them on shutdown). */
  timers?: FollowUpTimers;
  /** Arms the timers again for every follow-up still kept (call once at start; never throws). @returns how many */
  resume(): Promise<number>;
  /**
   * Lambda with the scheduler wiring: one try of the kept follow-up `id` (its schedule fired). A try
   * that throws (the store unreachable) is scheduled again after the lease, as a timer would be.
   * @returns how the try went, or `rescheduled` when it threw and was scheduled again
   * @throws when it threw and could not be scheduled again either (Lambda's async retries take it on)
   */
  run?(id: string): Promise<Awaited<ReturnType<FollowUps['run']>> | 'rescheduled'>;
}

export interface FollowUpClients {
  dynamodb: DynamoDBClient;
  metrics?: Metrics;
  /** False in Lambda: retries go to EventBridge Scheduler when wired, else nowhere. */
  inProcessTimers?: boolean;
  /** Lambda: this function's unqualified ARN (the schedules invoke it), known from the first invocation. */
  functionArn?: () => string;
}

/** What the wiring needs besides the clients: stores, channels, logger, clock, and the scheduler's loader. */
export interface FollowUpWiringDeps {
  stores: AlertStores;
  /** Every channel by name, escalation targets included. */
  channels: Channel[];
  logger: Logger;
  /** Epoch milliseconds. */
  now: () => number;
  /** EventBridge Scheduler's one-time schedules, loaded on the first use (Lambda). */
  schedules: LoadSchedules;
  /** Whether this process acknowledges alerts (links configured): only then is a missing wiring worth a warning. */
  acknowledges: boolean;
}

export function createFollowUps(
  clients: FollowUpClients,
  config: Pick<Config, 'tableName' | 'delivery' | 'followUpScheduler'>,
  deps: FollowUpWiringDeps,
): FollowUpWiring {
  const store = new DynamoDbFollowUpStore(clients.dynamodb, { tableName: config.tableName ?? DEFAULT_TABLE_NAME });
  const { logger, now } = deps;
  const followUpDeps = (scheduler: FollowUpScheduler): FollowUpDeps => ({
    stores: deps.stores,
    channels: deps.channels,
    logger,
    now,
    delivery: config.delivery,
    store,
    scheduler,
    count: (channel, outcome) => clients.metrics?.inc('follow_ups_total', { channel, outcome }),
  });
  if (clients.inProcessTimers !== false) return onTimers(store, followUpDeps, deps);
  const wiring = config.followUpScheduler;
  if (wiring && clients.functionArn) {
    const functionArn = clients.functionArn;
    const scheduler = scheduledFollowUps(() => deps.schedules({ ...wiring, functionArn }));
    const followUps = new FollowUps(followUpDeps(scheduler));
    return { followUps, resume: async () => 0, run: runOnce(followUps, scheduler, deps) };
  }
  if (clients.functionArn && deps.acknowledges)
    logger.warn('follow-up retries off', {
      reason:
        'no EventBridge Scheduler wiring (FOLLOW_UP_SCHEDULE_GROUP, FOLLOW_UP_ROLE_ARN; the CDK stack sets them): ' +
        'in-process timers would not survive a frozen Lambda, ' +
        'so a follow-up a platform refuses for now is not tried again',
    });
  return { resume: async () => 0 };
}

/** `npm start`: in-process timers, armed again from the table at start. */
function onTimers(
  store: DynamoDbFollowUpStore,
  followUpDeps: (scheduler: FollowUpScheduler) => FollowUpDeps,
  { logger, now }: Pick<FollowUpWiringDeps, 'logger' | 'now'>,
): FollowUpWiring {
  const timers: FollowUpTimers = new FollowUpTimers(
    (id): Promise<unknown> => followUps.run(id),
    (id, error, retryAtMs) =>
      logger.error('follow-up retry failed to run', { id, error, retryAt: new Date(retryAtMs).toISOString() }),
    now,
  );
  const followUps: FollowUps = new FollowUps(followUpDeps(timers));
  const resume = async () => {
    const kept = await store.list().catch((error: Error) => {
      logger.error('follow-ups not resumed', { error: error.message });
      return [];
    });
    for (const f of kept) await timers.schedule(f.id, f.dueAtMs);
    if (kept.length) logger.info('follow-ups resumed', { kept: kept.length });
    return kept.length;
  };
  return { followUps, timers, resume };
}

/** The EventBridge Scheduler adapter, its code loaded on the first schedule (a follow-up a platform refused). */
function scheduledFollowUps(load: () => Promise<OneTimeSchedules>): FollowUpScheduler {
  return {
    schedule: async (id: string, dueAtMs: number) => {
      const [{ FollowUpSchedules }, schedules] = await Promise.all([import('../ack/follow-up-schedules.js'), load()]);
      await new FollowUpSchedules(schedules).schedule(id, dueAtMs);
    },
  };
}

/** A scheduled try in Lambda (see {@link FollowUpWiring.run}). */
function runOnce(
  followUps: FollowUps,
  scheduler: FollowUpScheduler,
  { logger, now }: Pick<FollowUpWiringDeps, 'logger' | 'now'>,
): NonNullable<FollowUpWiring['run']> {
  return async (id) => {
    try {
      return await followUps.run(id);
    } catch (error) {
      const retryAtMs = now() + FOLLOW_UP_RETRY.leaseMs;
      logger.error('follow-up retry failed to run', { id, error, retryAt: new Date(retryAtMs).toISOString() });
      await scheduler.schedule(id, retryAtMs);
      return 'rescheduled';
    }
  };
}

/**
 * The function's own ARN without a version or alias qualifier (`…:function:name:prod` → `…:function:name`):
 * what the schedules name and the invoke role allows.
 * @param invokedFunctionArn the invocation context's `invokedFunctionArn`
 * @throws Error when it is not a Lambda function ARN (the invocation did not say which function it is)
 */
export function unqualifiedFunctionArn(invokedFunctionArn: string | undefined): string {
  const parts = (invokedFunctionArn ?? '').split(':');
  if (parts.length < 7 || parts[2] !== 'lambda' || parts[5] !== 'function')
    throw new Error('this function’s ARN is unknown (no invokedFunctionArn in the invocation context)');
  return parts.slice(0, 7).join(':');
}
