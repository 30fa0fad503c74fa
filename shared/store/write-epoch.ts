/**
 * The writes a DynamoDB client has sent, counted at its middleware, for a table this process alone
 * writes (the embedded store of `npm start`, `DynamoDbDedupeStoreOptions.exclusive`): when no write was
 * sent between a read and now, every item read is still what the table holds, and a batch of writes
 * under the keys' in-process locks (`start-many.ts`) need not read them again.
 *
 * Our own code because it is a counter on the SDK's middleware stack, specific to this use. It proves
 * nothing on a table other processes (or other clients of this process) write, so only an exclusive store
 * installs it: `npm start` opens its embedded table with one client, which every store of it shares.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

/** Operations that change items (every other operation of the store reads). */
const WRITES = new Set(['PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand', 'BatchWriteItemCommand', 'TransactWriteItemsCommand']);

interface Counter {
  /** Writes sent so far. */
  sent: number;
  /** Writes sent and not yet answered. */
  inFlight: number;
}

const counters = new WeakMap<DynamoDBClient, Counter>();

/** Counts the writes `client` sends from now on (once per client, whatever the number of stores on it). */
export function watchWrites(client: DynamoDBClient): void {
  if (counters.has(client)) return;
  const counter: Counter = { sent: 0, inFlight: 0 };
  counters.set(client, counter);
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (!WRITES.has(context.commandName ?? '')) return next(args);
      counter.sent += 1;
      counter.inFlight += 1;
      try {
        return await next(args);
      } finally {
        counter.inFlight -= 1;
      }
    },
    { step: 'initialize', name: 'watchWrites' },
  );
}

/**
 * Taken just before a read: the mark to pass to {@link unchangedSince} later.
 * @returns `undefined` when the client is not watched or a write is in flight (it may land during the read)
 */
export function writeMark(client: DynamoDBClient): number | undefined {
  const counter = counters.get(client);
  return counter && counter.inFlight === 0 ? counter.sent : undefined;
}

/** Whether `client` has sent no write since `mark` was taken (so what was read then still stands). */
export function unchangedSince(client: DynamoDBClient, mark: number | undefined): boolean {
  return mark !== undefined && counters.get(client)?.sent === mark;
}
