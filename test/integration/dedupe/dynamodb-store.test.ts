import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbDedupeStore } from '../../../shared/dedupe/dynamodb-store.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../../shared/dedupe/local-dynamodb.js';

let db: LocalDynamoDb;
let n = 0;
const key = () => `event#test-${++n}#2026-11-29T12:00:00.000Z#firing`;
const T0 = Date.parse('2026-11-29T12:00:00Z');

beforeAll(async () => {
  db = await startLocalDynamoDb('dedupe-store-test');
});
afterAll(async () => db.close());

function store(leaseMs = 60_000, ttlSeconds = 3600) {
  return new DynamoDbDedupeStore(db.client, { tableName: db.tableName, ttlSeconds, leaseMs });
}

describe('DynamoDbDedupeStore against dynalite', () => {
  it('claims a new event once, for every channel', async () => {
    const s = store();
    const k = key();
    expect(await s.claim(k, ['slack', 'sns'], T0)).toEqual({ decision: 'first notification', pending: ['slack', 'sns'] });
    expect(await s.claim(k, ['slack', 'sns'], T0 + 1)).toEqual({ decision: 'in flight', pending: [] });
  });

  it('lets exactly one of many concurrent claims win', async () => {
    const s = store();
    const k = key();
    const claims = await Promise.all(Array.from({ length: 8 }, () => s.claim(k, ['slack'], T0)));
    expect(claims.filter((c) => c.decision === 'first notification')).toHaveLength(1);
    expect(claims.filter((c) => c.decision === 'in flight')).toHaveLength(7);
  });

  it('reports an event delivered to every channel as already notified', async () => {
    const s = store();
    const k = key();
    await s.claim(k, ['slack', 'sns'], T0);
    await s.markDelivered(k, 'slack');
    await s.markDelivered(k, 'sns');
    expect(await s.claim(k, ['slack', 'sns'], T0 + 1)).toEqual({ decision: 'already notified', pending: [] });
    const raw = await db.client.send(new GetItemCommand({ TableName: db.tableName, Key: { pk: { S: k } } }));
    expect(raw.Item?.delivered?.SS?.sort()).toEqual(['slack', 'sns']);
    expect(raw.Item?.pending).toBeUndefined();
    expect(Number(raw.Item?.expiresAt?.N)).toBe(T0 / 1000 + 3600);
  });

  it('repairs only the undelivered channels once the lease is released', async () => {
    const s = store();
    const k = key();
    await s.claim(k, ['slack', 'feishu', 'sns'], T0);
    await s.markDelivered(k, 'slack');
    await s.markDelivered(k, 'sns');
    expect((await s.claim(k, ['slack', 'feishu', 'sns'], T0 + 1)).decision).toBe('in flight');
    await s.release(k);
    expect(await s.claim(k, ['slack', 'feishu', 'sns'], T0 + 2)).toEqual({ decision: 'repair', pending: ['feishu'] });
    // The repairer now holds the lease: a concurrent retry must not also repair.
    expect((await s.claim(k, ['slack', 'feishu', 'sns'], T0 + 3)).decision).toBe('in flight');
  });

  it('repairs after the lease runs out when the holder crashed without releasing', async () => {
    const s = store(1000);
    const k = key();
    await s.claim(k, ['slack'], T0);
    expect((await s.claim(k, ['slack'], T0 + 999)).decision).toBe('in flight');
    expect(await s.claim(k, ['slack'], T0 + 1001)).toEqual({ decision: 'repair', pending: ['slack'] });
  });

  it('treats an expired item as absent although dynalite never deletes it', async () => {
    const s = store(60_000, 10);
    const k = key();
    await s.claim(k, ['slack'], T0);
    await s.markDelivered(k, 'slack');
    expect((await s.claim(k, ['slack'], T0 + 4_000)).decision).toBe('already notified');
    expect((await s.claim(k, ['slack'], T0 + 10_000)).decision).toBe('first notification');
  });

  it('keeps an alert that is still being resent past its TTL, so a long-firing alert is not announced again', async () => {
    const s = store(60_000, 100);
    const k = key();
    await s.claim(k, ['slack'], T0);
    await s.markDelivered(k, 'slack');
    // Resends before half the TTL change nothing; one after it extends the record past its first expiry (T0 + 100 s).
    expect((await s.claim(k, ['slack'], T0 + 40_000)).decision).toBe('already notified');
    expect((await s.claim(k, ['slack'], T0 + 60_000)).decision).toBe('already notified');
    expect((await s.claim(k, ['slack'], T0 + 100_000)).decision).toBe('already notified');
    const raw = await db.client.send(new GetItemCommand({ TableName: db.tableName, Key: { pk: { S: k } } }));
    expect(Number(raw.Item?.expiresAt?.N)).toBe((T0 + 60_000) / 1000 + 100);
  });

  it('records an event seen with no channel configured', async () => {
    const s = store();
    const k = key();
    expect((await s.claim(k, [], T0)).decision).toBe('first notification');
    expect((await s.claim(k, [], T0 + 1)).decision).toBe('already notified');
  });

  it('surfaces an unreachable table instead of treating events as new', async () => {
    const s = new DynamoDbDedupeStore(db.client, { tableName: 'no-such-table', ttlSeconds: 60 });
    await expect(s.claim(key(), ['slack'], T0)).rejects.toThrow(/ResourceNotFound|non-existent|not found/i);
  });
});
