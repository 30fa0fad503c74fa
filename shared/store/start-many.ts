/**
 * New heads of many alerts in a few requests, on a table this process alone writes (the embedded
 * store, `DynamoDbDedupeStoreOptions.exclusive`): under the in-process locks of their keys
 * (`key-locks.ts`, which every other head write of the store also takes), one strongly consistent
 * BatchGetItem per 100 heads says which are still absent or expired — unless no write at all was sent
 * since the batched read that found them so (`write-epoch.ts`) — and BatchWriteItem (25 per
 * request) creates those. That is what the conditional `PutItem` of `DedupeStore.claim` does per
 * alert (`attribute_not_exists(pk) OR expiresAt <= :nowSec`): of concurrent claimers one wins.
 *
 * A shared table keeps one conditional `PutItem` per new alert: `TransactWriteItems` could batch them
 * (100 per request), but HA peers race on exactly these claims, and a transaction is all or nothing — one
 * claim a peer won would cancel the group's others, each then sent again alone (the record writes after
 * delivery, which peers rarely race on, do go in transactions: `record-transactions.ts`).
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchWriteItem.html
 */
import { BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import pLimit from 'p-limit';
import { batchGet, BATCH_GET_MAX_KEYS } from './batch-get.js';
import { isLive, type HeadItem } from './head-item.js';
import { withKeys } from './key-locks.js';

/**
 * Fewest items worth a batch: a batch costs a read and a write request (under the locks) where single
 * conditional writes cost one each, so fewer (a one-alert group) go one by one.
 */
export const MIN_BATCH = 3;
/** BatchWriteItem's per-call item limit. */
const BATCH_WRITE_MAX_ITEMS = 25;
/** Rounds of `UnprocessedItems` retried; items still unprocessed are left to a claim of their own. */
const WRITE_ROUNDS = 3;
/** Slices of {@link BATCH_GET_MAX_KEYS} heads worked on at once. */
const SLICES_IN_FLIGHT = 8;

/**
 * Creates each head in `items` whose key holds no live item, atomically against every other writer
 * in this process that takes the key's lock.
 * @param items the heads to create, as `DedupeStore.claim` would write them
 * @param nowMs epoch milliseconds (an item whose `expiresAt` has passed counts as absent)
 * @param unchanged says, once the locks are held, whether the table is unchanged since the caller's
 *   batched read found these keys absent or expired (`write-epoch.ts`): then they are not read again
 * @returns the keys created; a key not returned was live, or left unprocessed by DynamoDB
 * @throws the SDK's error (heads of other slices may be created: their claims then read as in flight)
 */
export async function startMany(doc: DynamoDBDocumentClient, table: string, items: HeadItem[], nowMs: number, unchanged: () => boolean = () => false): Promise<Set<string>> {
  const created = new Set<string>();
  const limit = pLimit(SLICES_IN_FLIGHT);
  const slices = Array.from({ length: Math.ceil(items.length / BATCH_GET_MAX_KEYS) }, (_, i) => items.slice(i * BATCH_GET_MAX_KEYS, (i + 1) * BATCH_GET_MAX_KEYS));
  // Every key's lock at once (taken in sorted order: no deadlock), so that one look at the write count
  // covers them all; a write sent after that cannot touch these keys (each head write takes its lock).
  await withKeys(
    items.map((item) => lockKey(table, item.pk)),
    async () => {
      const known = unchanged();
      await Promise.all(
        slices.map((slice) =>
          limit(async () => {
            const free = known ? slice : await stillFree(doc, table, slice, nowMs);
            for (const key of await batchWrite(doc, table, free)) created.add(key);
          }),
        ),
      );
    },
  );
  return created;
}

/** The items whose key holds no live item now (one strongly consistent read per 100). */
async function stillFree(doc: DynamoDBDocumentClient, table: string, slice: HeadItem[], nowMs: number): Promise<HeadItem[]> {
  const read = await batchGet<HeadItem>(
    doc,
    table,
    slice.map((item) => item.pk),
  );
  return slice.filter((item) => read.has(item.pk) && !(read.get(item.pk) && isLive(read.get(item.pk)!, nowMs)));
}

/** The lock of a key of `table` (`key-locks.ts` is per process, not per table). */
export const lockKey = (table: string, pk: string) => `${table}\u0000${pk}`;

/** Puts `items`, 25 per request; returns the keys written. */
async function batchWrite(doc: DynamoDBDocumentClient, table: string, items: HeadItem[]): Promise<string[]> {
  const written: string[] = [];
  for (let i = 0; i < items.length; i += BATCH_WRITE_MAX_ITEMS) {
    let requests = items.slice(i, i + BATCH_WRITE_MAX_ITEMS).map((Item) => ({ PutRequest: { Item } }));
    const sent = new Set(requests.map((r) => r.PutRequest.Item.pk));
    for (let round = 0; requests.length && round < WRITE_ROUNDS; round++) {
      const out = await doc.send(new BatchWriteCommand({ RequestItems: { [table]: requests } }));
      requests = (out.UnprocessedItems?.[table] ?? []) as typeof requests;
    }
    for (const left of requests) sent.delete(left.PutRequest.Item.pk);
    written.push(...sent);
  }
  return written;
}
