/**
 * Wires durable follow-ups (`shared/ack/follow-ups.ts`) once per process: the follow-up store in the
 * dedupe table, the channels they replay to, the metric, and where their retries are scheduled: in-process
 * timers under `npm start`; in Lambda none (a frozen function loses timers), so a failed follow-up there
 * stays a failure, as before.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Channel } from '../channels/channel.js';
import type { Logger } from '../core/logger.js';
import { FollowUpTimers } from '../ack/follow-up-timers.js';
import { FollowUps } from '../ack/follow-ups.js';
import type { Metrics } from '../metrics/catalogue.js';
import type { AlertStores } from '../store/alert-record.js';
import { DynamoDbFollowUpStore } from '../store/follow-ups.js';
import { DEFAULT_TABLE_NAME } from '../store/table.js';
import type { Config } from './config.js';

export interface FollowUpWiring {
  followUps?: FollowUps;
  /** The in-process timers, when follow-ups run on them (stop them on shutdown). */
  timers?: FollowUpTimers;
  /** Arms the timers again for every follow-up still kept (call once at start; never throws). @returns how many */
  resume(): Promise<number>;
}

/**
 * @param clients `inProcessTimers`: false in Lambda (no durable retries there)
 * @param deps `channels`: every channel by name, escalation targets included
 */
export function createFollowUps(
  clients: { dynamodb: DynamoDBClient; metrics?: Metrics; inProcessTimers?: boolean },
  config: Pick<Config, 'tableName' | 'delivery'>,
  deps: { stores: AlertStores; channels: Channel[]; logger: Logger; now: () => number },
): FollowUpWiring {
  if (clients.inProcessTimers === false) return { resume: async () => 0 };
  const store = new DynamoDbFollowUpStore(clients.dynamodb, { tableName: config.tableName ?? DEFAULT_TABLE_NAME });
  const { logger, now } = deps;
  const timers: FollowUpTimers = new FollowUpTimers(
    (id): Promise<unknown> => followUps.run(id),
    (id, error, retryAtMs) =>
      logger.error('follow-up retry failed to run', { id, error, retryAt: new Date(retryAtMs).toISOString() }),
    now,
  );
  const followUps: FollowUps = new FollowUps({
    ...deps,
    delivery: config.delivery,
    store,
    scheduler: timers,
    count: (channel, outcome) => clients.metrics?.inc('follow_ups_total', { channel, outcome }),
  });
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
