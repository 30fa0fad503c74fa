/**
 * Conditional writes of many items in `TransactWriteItems` requests of up to 100 actions, for a table other
 * processes write too (DynamoDB): the only DynamoDB operation that batches conditional writes. A transaction
 * is all or nothing, so one write whose condition fails (an HA peer or an acknowledgement wrote the item
 * first) cancels the others: DynamoDB's `CancellationReasons` say which failed; those are left to the
 * caller's single conditional write, which handles every race, and the others are tried once more in a
 * transaction of their own. Each item written this way costs two write units per KB instead of one
 * (DynamoDB's prepare and commit), for one request instead of one per item.
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-capacity-handling
 */
import { type DynamoDBDocumentClient, TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import pLimit from 'p-limit';

/** TransactWriteItems' per-request action limit. */
export const TRANSACT_MAX_ACTIONS = 100;
/**
 * Most bytes of attribute values per transaction: DynamoDB refuses a transaction whose items exceed 4 MB in
 * all (a record is ~3 KB, but an alert may carry up to the 400 KB item limit); values are most of an item.
 */
const TRANSACT_MAX_VALUE_BYTES = 3 * 1024 * 1024;
/** Transactions of one call in flight at once (a storm's 5,000 records are 50 transactions). */
const IN_FLIGHT = 8;
/** Transactions per chunk: the first, and one more without the writes whose condition failed. */
const ROUNDS = 2;

/** A transaction's `Update` action: an `UpdateItem` input without `ReturnValues`. */
export type TransactUpdate = NonNullable<NonNullable<TransactWriteCommandInput['TransactItems']>[number]['Update']>;

/** Whether the endpoint answers TransactWriteItems; `false` once it said it does not (dynalite without the emulation). */
export interface TransactSupport {
  supported: boolean;
}

/**
 * Sends `updates` (each on a different item) in transactions of up to {@link TRANSACT_MAX_ACTIONS}.
 * Never throws: each chunk stands alone, so one chunk's failure leaves the others' answers as they are.
 * @param onError called with a chunk's unexpected error (throttling after the SDK's retries, the network):
 *   its updates are then reported not applied, and the caller writes each alone (as without transactions)
 * @returns per update, in order, whether it was applied; one not applied had its condition fail, or was
 *   left out by a cancellation twice, or its transaction was refused (a `ValidationException`, e.g. an
 *   item over 400 KB, or no TransactWriteItems at the endpoint) or failed (`onError`): the caller writes it alone
 */
export async function transactUpdates(doc: DynamoDBDocumentClient, updates: TransactUpdate[], support: TransactSupport, onError: (err: Error, writes: number) => void): Promise<boolean[]> {
  const applied = updates.map(() => false);
  const limit = pLimit(IN_FLIGHT);
  await Promise.all(
    chunks(updates).map((chunk) =>
      limit(async () => {
        let indices = chunk;
        try {
          for (let round = 0; round < ROUNDS && indices.length > 1 && support.supported; round++) {
            const left = await transact(doc, indices, updates, support);
            if (!left) {
              for (const i of indices) applied[i] = true;
              return;
            }
            indices = left;
          }
        } catch (err) {
          // A transaction is all or nothing: none of `indices` was written (if the request's fate is unknown, a
          // single write of a record it did write adds channels to that record: nothing is lost).
          onError(err as Error, indices.length);
        }
      }),
    ),
  );
  return applied;
}

/** The indices of `updates` in runs of at most {@link TRANSACT_MAX_ACTIONS} and {@link TRANSACT_MAX_VALUE_BYTES}. */
function chunks(updates: TransactUpdate[]): number[][] {
  const runs: number[][] = [];
  let bytes = 0;
  updates.forEach((update, i) => {
    // UTF-8 bytes, as DynamoDB counts them (a CJK character is 3 bytes, 1 in `length`).
    const size = Buffer.byteLength(JSON.stringify(update.ExpressionAttributeValues ?? {}));
    const last = runs.at(-1);
    if (last && last.length < TRANSACT_MAX_ACTIONS && bytes + size <= TRANSACT_MAX_VALUE_BYTES) {
      last.push(i);
      bytes += size;
    } else {
      runs.push([i]);
      bytes = size;
    }
  });
  return runs;
}

/** One transaction of `updates[indices]`: `undefined` when applied, else the indices worth trying again. */
async function transact(doc: DynamoDBDocumentClient, indices: number[], updates: TransactUpdate[], support: TransactSupport): Promise<number[] | undefined> {
  try {
    await doc.send(new TransactWriteCommand({ TransactItems: indices.map((i) => ({ Update: updates[i]! })) }));
    return undefined;
  } catch (err) {
    const e = err as Error & { CancellationReasons?: { Code?: string }[] };
    if (e.name === 'TransactionCanceledException') {
      // `None`: this write was fine; any other code (its condition, a conflicting transaction, its own validation) goes alone.
      const reasons = e.CancellationReasons ?? [];
      return reasons.length === indices.length ? indices.filter((_, j) => reasons[j]?.Code === 'None') : [];
    }
    if (e.name === 'UnknownOperationException') support.supported = false;
    if (e.name === 'UnknownOperationException' || e.name === 'ValidationException') return [];
    throw err;
  }
}
