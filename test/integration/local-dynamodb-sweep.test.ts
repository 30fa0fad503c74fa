/**
 * The embedded store deletes expired items as DynamoDB's TTL does (dynalite itself never does):
 * items past `expiresAt` go, others stay, whatever their kind.
 */
import { GetItemCommand, PutItemCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalDynamoDb, sweepExpired, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';

const NOW_MS = Date.parse('2026-06-01T12:00:00Z');
const NOW_S = NOW_MS / 1000;

describe('sweepExpired (embedded store)', () => {
  let db: LocalDynamoDb;
  beforeAll(async () => {
    db = await startLocalDynamoDb('sweep-test');
  });
  afterAll(() => db.close());

  const put = (pk: string, expiresAt?: number) =>
    db.client.send(
      new PutItemCommand({
        TableName: db.tableName,
        Item: {
          pk: { S: pk },
          data: { S: 'x'.repeat(100) },
          ...(expiresAt !== undefined && { expiresAt: { N: String(expiresAt) } }),
        },
      }),
    );
  const keys = async () =>
    ((await db.client.send(new ScanCommand({ TableName: db.tableName }))).Items ?? []).map((i) => i.pk!.S!).sort();

  it('deletes items whose expiresAt has passed (or is now) and keeps the rest', async () => {
    const expired = Array.from({ length: 60 }, (_, i) => `history#fp${i}#0000000001`);
    for (const pk of expired) await put(pk, NOW_S - 1 - (expired.indexOf(pk) % 3) * 86_400);
    await put('alert#due-now', NOW_S);
    await put('alert#fresh', NOW_S + 1);
    await put('heartbeat#no-ttl');

    expect(await sweepExpired(db.client, db.tableName, NOW_MS)).toBe(61);
    expect(await keys()).toEqual(['alert#fresh', 'heartbeat#no-ttl']);
    expect(await sweepExpired(db.client, db.tableName, NOW_MS)).toBe(0);
  });

  it('keeps an item written again with a later expiresAt', async () => {
    await put('alert#rewritten', NOW_S - 10);
    await put('alert#rewritten', NOW_S + 3600);
    await sweepExpired(db.client, db.tableName, NOW_MS);
    const item = await db.client.send(
      new GetItemCommand({ TableName: db.tableName, Key: { pk: { S: 'alert#rewritten' } } }),
    );
    expect(item.Item?.expiresAt?.N).toBe(String(NOW_S + 3600));
  });
});
