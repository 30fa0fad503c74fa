/**
 * The writes a DynamoDB client has sent, counted at its middleware, for a table this process alone
 * writes (the embedded store of `npm start`, `DynamoDbDedupeStoreOptions.exclusive`): when no write was
 * sent between a read and now, every item read is still what the table holds, and a batch of writes
 * under the keys' in-process locks (`start-many.ts`) need not read them again.
 *
 * Writes are also counted per key space (the partition key's prefix, e.g. `alert#` for alert records), so that a
 * read of records still stands after writes of other items (the group's claims).
 *
 * Our own code because it is a counter on the SDK's middleware stack, specific to this use. It proves
 * nothing on a table other processes (or other clients of this process) write, so only an exclusive store
 * installs it: `npm start` opens its embedded table with one client, which every store of it shares.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

/** Operations that change items (every other operation of the store reads). */
const WRITES = new Set(['PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand', 'BatchWriteItemCommand', 'TransactWriteItemsCommand']);
/** The key space of a write whose keys are not read here (a transaction): it counts as a write to every space. */
const ANY = '*';

interface Counter {
  /** Writes sent so far. */
  sent: number;
  /** Writes sent and not yet answered. */
  inFlight: number;
  /** The same, per key space written (the partition key's prefix up to its first `#`, e.g. `alert#`). */
  spaces: Map<string, { sent: number; inFlight: number }>;
}

const counters = new WeakMap<DynamoDBClient, Counter>();

/** Counts the writes `client` sends from now on (once per client, whatever the number of stores on it). */
export function watchWrites(client: DynamoDBClient): void {
  if (counters.has(client)) return;
  const counter: Counter = { sent: 0, inFlight: 0, spaces: new Map() };
  counters.set(client, counter);
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (!WRITES.has(context.commandName ?? '')) return next(args);
      const spaces = [...spacesOf(args.input as WriteInput)].map((space) => counter.spaces.get(space) ?? counter.spaces.set(space, { sent: 0, inFlight: 0 }).get(space)!);
      for (const c of [counter, ...spaces]) {
        c.sent += 1;
        c.inFlight += 1;
      }
      try {
        return await next(args);
      } finally {
        for (const c of [counter, ...spaces]) c.inFlight -= 1;
      }
    },
    { step: 'initialize', name: 'watchWrites' },
  );
}

/**
 * Taken just before a read: the mark to pass to {@link unchangedSince} later.
 * @param space only writes to keys of this prefix (e.g. `alert#`) count; unset: every write
 * @returns `undefined` when the client is not watched or a write is in flight (it may land during the read)
 */
export function writeMark(client: DynamoDBClient, space?: string): number | undefined {
  const counter = counters.get(client);
  if (!counter) return undefined;
  if (space === undefined) return counter.inFlight === 0 ? counter.sent : undefined;
  const [own, any] = [counter.spaces.get(space), counter.spaces.get(ANY)];
  return (own?.inFlight ?? 0) + (any?.inFlight ?? 0) === 0 ? (own?.sent ?? 0) + (any?.sent ?? 0) : undefined;
}

/** Whether `client` has sent no write (to `space`, when given) since `mark` was taken (so what was read then still stands). */
export function unchangedSince(client: DynamoDBClient, mark: number | undefined, space?: string): boolean {
  const counter = counters.get(client);
  if (mark === undefined || !counter) return false;
  const [own, any] = [counter.spaces.get(space ?? ''), counter.spaces.get(ANY)];
  return (space === undefined ? counter.sent : (own?.sent ?? 0) + (any?.sent ?? 0)) === mark;
}

/** A write's input, as the client's middleware sees it (attribute values plain or marshalled, `{ S: … }`). */
interface WriteInput {
  Key?: { pk?: unknown };
  Item?: { pk?: unknown };
  RequestItems?: Record<string, { PutRequest?: { Item?: { pk?: unknown } }; DeleteRequest?: { Key?: { pk?: unknown } } }[]>;
}

/** The key spaces a write touches; {@link ANY} when its keys cannot be read here. */
function spacesOf(input: WriteInput): Set<string> {
  const keys = input.RequestItems ? Object.values(input.RequestItems).flatMap((requests) => requests.map((r) => r.PutRequest?.Item?.pk ?? r.DeleteRequest?.Key?.pk)) : [(input.Key ?? input.Item)?.pk];
  return new Set(keys.map(spaceOf));
}

function spaceOf(pk: unknown): string {
  const text = typeof pk === 'string' ? pk : (pk as { S?: unknown } | undefined)?.S;
  if (typeof text !== 'string' || !text.includes('#')) return ANY;
  return text.slice(0, text.indexOf('#') + 1);
}
