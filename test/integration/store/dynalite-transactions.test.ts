/**
 * The `TransactWriteItems` emulation for dynalite (`shared/store/dynalite-transactions.ts`), through the real
 * AWS SDK (DynamoDBClient and the document client's TransactWriteCommand), against the API reference:
 * success, a failing condition cancelling every action with reasons in action order, validation errors
 * before anything is written, and atomicity against single writes sent while it runs.
 */
import { TransactionCanceledException, TransactWriteItemsCommand } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, DynamoDBDocumentClient, GetCommand, PutCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../../shared/store/local-dynamodb.js';

let db: LocalDynamoDb;
let doc: DynamoDBDocumentClient;
let table: string;
let n = 0;
const key = () => `txn#${++n}`;

beforeAll(async () => {
  db = await startLocalDynamoDb('txn-emulation-test');
  doc = DynamoDBDocumentClient.from(db.client);
  table = db.tableName;
});
afterAll(async () => db.close());

const get = async (pk: string) => (await doc.send(new GetCommand({ TableName: table, Key: { pk }, ConsistentRead: true }))).Item;
const absent = (pk: string, Item: Record<string, unknown>) => ({ Put: { TableName: table, Item: { pk, ...Item }, ConditionExpression: 'attribute_not_exists(pk)' } });

/** The error a send throws (the test fails if it does not throw). */
async function failure(send: Promise<unknown>): Promise<Error & Record<string, unknown>> {
  try {
    await send;
  } catch (err) {
    return err as Error & Record<string, unknown>;
  }
  throw new Error('expected the request to fail');
}

describe('TransactWriteItems on dynalite', () => {
  it('applies Put, Update, Delete and ConditionCheck together when every condition holds, at two write units per KB', async () => {
    const [a, b, c, d] = [key(), key(), key(), key()];
    await doc.send(new PutCommand({ TableName: table, Item: { pk: b, n: 1 } }));
    await doc.send(new PutCommand({ TableName: table, Item: { pk: c, gone: true } }));
    await doc.send(new PutCommand({ TableName: table, Item: { pk: d, state: 'open' } }));
    const out = await doc.send(
      new TransactWriteCommand({
        ReturnConsumedCapacity: 'TOTAL',
        TransactItems: [
          absent(a, { v: 'new' }),
          {
            Update: {
              TableName: table,
              Key: { pk: b },
              UpdateExpression: 'SET #n = #n + :one',
              ConditionExpression: '#n = :one',
              ExpressionAttributeNames: { '#n': 'n' },
              ExpressionAttributeValues: { ':one': 1 },
            },
          },
          { Delete: { TableName: table, Key: { pk: c }, ConditionExpression: 'attribute_exists(pk)' } },
          { ConditionCheck: { TableName: table, Key: { pk: d }, ConditionExpression: '#s = :open', ExpressionAttributeNames: { '#s': 'state' }, ExpressionAttributeValues: { ':open': 'open' } } },
        ],
      }),
    );
    expect(await get(a)).toEqual({ pk: a, v: 'new' });
    expect(await get(b)).toEqual({ pk: b, n: 2 });
    expect(await get(c)).toBeUndefined();
    // Four small items, each at 1 unit, doubled (DynamoDB's prepare and commit).
    expect(out.ConsumedCapacity).toEqual([{ TableName: table, CapacityUnits: 8, WriteCapacityUnits: 8 }]);
  });

  it('cancels every action when one condition fails: reasons in action order, DynamoDB message, nothing written', async () => {
    const [a, b, c] = [key(), key(), key()];
    await doc.send(new PutCommand({ TableName: table, Item: { pk: b, v: 'taken' } }));
    const err = await failure(doc.send(new TransactWriteCommand({ TransactItems: [absent(a, { v: 1 }), absent(b, { v: 2 }), absent(c, { v: 3 })] })));
    expect(err).toBeInstanceOf(TransactionCanceledException);
    expect(err.name).toBe('TransactionCanceledException');
    expect(err.message).toBe('Transaction cancelled, please refer cancellation reasons for specific reasons [None, ConditionalCheckFailed, None]');
    expect(err.CancellationReasons).toEqual([{ Code: 'None' }, { Code: 'ConditionalCheckFailed', Message: 'The conditional request failed' }, { Code: 'None' }]);
    expect(await get(a)).toBeUndefined();
    expect(await get(b)).toEqual({ pk: b, v: 'taken' });
    expect(await get(c)).toBeUndefined();
  });

  it('returns the item whose condition failed when ReturnValuesOnConditionCheckFailure is ALL_OLD', async () => {
    const a = key();
    await doc.send(new PutCommand({ TableName: table, Item: { pk: a, v: 'old' } }));
    const put = { ...absent(a, { v: 'new' }).Put, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const };
    const err = await failure(db.client.send(new TransactWriteItemsCommand({ TransactItems: [{ Put: { ...put, Item: { pk: { S: a }, v: { S: 'new' } } } }] })));
    expect(err.CancellationReasons).toEqual([{ Code: 'ConditionalCheckFailed', Message: 'The conditional request failed', Item: { pk: { S: a }, v: { S: 'old' } } }]);
  });

  it('rejects two actions on one item, more than 100 actions, none, and an entry of two kinds, writing nothing', async () => {
    const [a, b] = [key(), key()];
    const twice = await failure(doc.send(new TransactWriteCommand({ TransactItems: [absent(a, { v: 1 }), absent(b, { v: 1 }), { Delete: { TableName: table, Key: { pk: a } } }] })));
    expect(twice.name).toBe('ValidationException');
    expect(twice.message).toBe('Transaction request cannot include multiple operations on one item');
    const many = await failure(doc.send(new TransactWriteCommand({ TransactItems: Array.from({ length: 101 }, () => absent(key(), { v: 1 })) })));
    expect(many.name).toBe('ValidationException');
    expect(many.message).toMatch(/^1 validation error detected: .* at 'transactItems' failed to satisfy constraint: Member must have length less than or equal to 100$/);
    const none = await failure(doc.send(new TransactWriteCommand({ TransactItems: [] })));
    expect(none.message).toMatch(/Member must have length greater than or equal to 1$/);
    const both = await failure(doc.send(new TransactWriteCommand({ TransactItems: [{ ...absent(b, { v: 2 }), Delete: { TableName: table, Key: { pk: b } } }] })));
    expect(both.message).toBe('TransactItems can only contain one of Check, Put, Update or Delete');
    const syntax = await failure(doc.send(new TransactWriteCommand({ TransactItems: [absent(b, {}), { Update: { TableName: table, Key: { pk: key() }, UpdateExpression: 'SET = 1' } }] })));
    expect(syntax.name).toBe('ValidationException');
    expect(syntax.message).toMatch(/^Invalid UpdateExpression/);
    expect(await get(a)).toBeUndefined();
    expect(await get(b)).toBeUndefined();
  });

  it('answers a repeated ClientRequestToken with success and no second write, and a reused one with IdempotentParameterMismatchException', async () => {
    const a = key();
    const put = (v: string) => new TransactWriteCommand({ ClientRequestToken: `token-${a}`, TransactItems: [{ Put: { TableName: table, Item: { pk: a, v } } }] });
    await doc.send(put('first'));
    await doc.send(new PutCommand({ TableName: table, Item: { pk: a, v: 'changed since' } }));
    await doc.send(put('first'));
    expect(await get(a)).toEqual({ pk: a, v: 'changed since' });
    expect((await failure(doc.send(put('other')))).name).toBe('IdempotentParameterMismatchException');
  });

  it('restores the items already written when a later write fails, and names it ValidationError', async () => {
    const [a, b] = [key(), key()];
    await doc.send(new PutCommand({ TableName: table, Item: { pk: b, n: 'text' } }));
    const err = await failure(
      doc.send(
        new TransactWriteCommand({
          TransactItems: [
            absent(a, { v: 1 }),
            { Update: { TableName: table, Key: { pk: b }, UpdateExpression: 'ADD #n :one', ExpressionAttributeNames: { '#n': 'n' }, ExpressionAttributeValues: { ':one': 1 } } },
          ],
        }),
      ),
    );
    expect(err.name).toBe('TransactionCanceledException');
    expect((err.CancellationReasons as { Code: string }[]).map((r) => r.Code)).toEqual(['None', 'ValidationError']);
    expect(await get(a)).toBeUndefined();
    expect(await get(b)).toEqual({ pk: b, n: 'text' });
  });

  it('is atomic against requests sent while it runs: a single write lands wholly before or after it, a reader sees all of it or none', async () => {
    const outcomes = new Set<string>();
    for (let round = 0; round < 20; round++) {
      const keys = Array.from({ length: 100 }, () => key());
      const racer = keys[round * 5]!;
      const txn = doc.send(new TransactWriteCommand({ TransactItems: keys.map((k) => absent(k, { v: 'txn' })) })).then(
        () => 'txn won',
        (err: Error & { CancellationReasons?: { Code: string }[] }) => `${err.name} ${err.CancellationReasons?.[round * 5]?.Code}`,
      );
      // Readers of every key, one per turn of the event loop while the transaction runs.
      const seen: Promise<number>[] = [];
      for (let turn = 0; turn < round; turn++) {
        seen.push(batchCount(keys));
        await new Promise((resolve) => setImmediate(resolve));
      }
      // A single conditional write of one of the transaction's items, sent 0 to 19 turns after it.
      const single = doc
        .send(
          new UpdateCommand({ TableName: table, Key: { pk: racer }, UpdateExpression: 'SET v = :s', ConditionExpression: 'attribute_not_exists(pk)', ExpressionAttributeValues: { ':s': 'single' } }),
        )
        .then(
          () => 'single won',
          (err: Error) => err.name,
        );
      const [s, t] = await Promise.all([single, txn]);
      const items = await Promise.all(keys.map(get));
      if (t === 'txn won') {
        expect(s).toBe('ConditionalCheckFailedException');
        expect(items.every((i) => i?.v === 'txn')).toBe(true);
      } else {
        expect([s, t]).toEqual(['single won', 'TransactionCanceledException ConditionalCheckFailed']);
        expect(items.filter(Boolean)).toEqual([{ pk: racer, v: 'single' }]);
      }
      for (const count of await Promise.all(seen)) expect([0, keys.length]).toContain(count);
      outcomes.add(t);
    }
    // Both orders happened (the single write sent at once wins; sent later, it finds the transaction's item).
    expect([...outcomes].sort()).toEqual(['TransactionCanceledException ConditionalCheckFailed', 'txn won']);
  });
});

/** How many of `keys` hold the transaction's value, in one BatchGetItem. */
async function batchCount(keys: string[]): Promise<number> {
  const out = await doc.send(new BatchGetCommand({ RequestItems: { [table]: { Keys: keys.map((pk) => ({ pk })), ConsistentRead: true } } }));
  return (out.Responses?.[table] ?? []).filter((i) => i.v === 'txn').length;
}
