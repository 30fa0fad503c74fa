/**
 * The pipeline's dependencies for a test, built in one place: `testDeps(overrides)` gives each dependency
 * a default a test rarely cares about, and a test names only what it is about.
 * - the dedupe store and the alert stores on `table` (dynalite through the real AWS SDK); without one, stores
 *   that refuse every call (a test that never reaches the store);
 * - no channels; enrichment that answers nothing; one attempt per channel (`retries: 0`);
 * - a silent logger;
 * - a test clock ({@link testClock}): `now` stands still unless the test or a wait moves it, and `sleep`
 *   moves it instead of waiting, so a retry's backoff costs the test no real time.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { silentLogger } from '../../shared/core/logger.js';
import type { Enrichment } from '../../shared/enrich/types.js';
import type { PipelineDeps } from '../../shared/pipeline/index.js';
import type { AlertStores } from '../../shared/store/alert-record.js';
import { alertStores } from '../../shared/store/alert-stores.js';
import type { DedupeStore } from '../../shared/store/dedupe.js';
import { DynamoDbDedupeStore } from '../../shared/store/dedupe-dynamodb.js';
import { type TestClock, testClock } from './clock.js';

/** A dynalite table (`startLocalDynamoDb`, `ensureTable`). */
export interface TestTable {
  client: DynamoDBClient;
  tableName: string;
}

/** How long test items are kept, seconds. */
const TTL_SECONDS = 3600;

/**
 * @param overrides any dependency, and `table`: where the stores keep their items; `clock`: the clock
 *   whose `now` and `sleep` the pipeline uses (default a fresh {@link testClock})
 */
export function testDeps(
  overrides: Partial<PipelineDeps> & { table?: TestTable; clock?: Pick<TestClock, 'now' | 'sleep'> } = {},
): PipelineDeps {
  const { table, clock = testClock(), ...rest } = overrides;
  return {
    store: table
      ? new DynamoDbDedupeStore(table.client, { tableName: table.tableName, ttlSeconds: TTL_SECONDS })
      : noStore(),
    alerts: table
      ? alertStores(table.client, { tableName: table.tableName, ttlSeconds: TTL_SECONDS })
      : noAlertStores(),
    channels: [],
    enrich: async () => new Map<string, Enrichment>(),
    delivery: { timeoutMs: 1000, retries: 0 },
    logger: silentLogger,
    now: clock.now,
    sleep: clock.sleep,
    ...rest,
  };
}

const refuse = async (): Promise<never> => {
  throw new Error('this test has no store (pass `table` to testDeps)');
};

function noStore(): DedupeStore {
  return { readMany: refuse, claim: refuse, confirm: refuse, markDelivered: refuse, release: refuse };
}

function noAlertStores(): Pick<AlertStores, 'records' | 'history'> {
  return {
    records: { get: refuse, getMany: refuse, recordNotified: refuse, addChannels: refuse },
    history: { add: refuse, flush: refuse, last: refuse },
  };
}
