/**
 * The group's batched read is eventually consistent (`DedupeStore.readMany`, half the read units): a hint that
 * may be stale, never the authority. On dynalite through the real store, with a stale reader injected at the AWS
 * SDK's middleware: an eventually consistent BatchGetItem answers from a snapshot taken earlier (what DynamoDB
 * may answer within a second or so of a write), a strongly consistent one from the table. A stale read must
 * never lose a new alert, nor send an alert twice.
 */
import { DeleteItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Alert } from '../../../shared/alertmanager/schema.js';
import { alertStores } from '../../../shared/store/alert-stores.js';
import { DynamoDbDedupeStore } from '../../../shared/store/dedupe-dynamodb.js';
import type { Claim } from '../../../shared/store/dedupe.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../../shared/store/local-dynamodb.js';

const T0 = Date.parse('2026-11-29T12:00:00Z');
const STARTS_AT = '2026-11-29T12:00:00.000Z';
const LEASE_MS = 60_000;
const TTL_SECONDS = 3600;
let db: LocalDynamoDb;
let n = 0;

type Answer = Record<string, unknown>;
/** Items the stale reader answers with, by key; `undefined`: the reader reads the table. */
let snapshot: Map<string, Answer> | undefined;
/** What the reads asked: `true` for each strongly consistent BatchGetItem, `false` for each eventual one. */
const consistency: boolean[] = [];
/** Read units the eventually consistent BatchGetItems consumed (`ReturnConsumedCapacity`). */
let hintUnits = 0;

const pkOf = (item: Answer) => {
  const pk = item.pk as string | { S: string };
  return typeof pk === 'string' ? pk : pk.S;
};

beforeAll(async () => {
  db = await startLocalDynamoDb('stale-hint-test');
  db.client.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName !== 'BatchGetItemCommand') return next(args);
      const input = args.input as { RequestItems: Record<string, { Keys: Answer[]; ConsistentRead?: boolean }> };
      const asked = Object.values(input.RequestItems)[0]!;
      consistency.push(asked.ConsistentRead === true);
      if (asked.ConsistentRead || !snapshot) {
        const out = await next({ ...args, input: { ...input, ReturnConsumedCapacity: 'TOTAL' } });
        const consumed = (out.output as { ConsumedCapacity?: { CapacityUnits?: number }[] }).ConsumedCapacity;
        if (!asked.ConsistentRead) hintUnits += (consumed ?? []).reduce((a, c) => a + (c.CapacityUnits ?? 0), 0);
        return out;
      }
      const found = asked.Keys.flatMap((k) => (snapshot!.has(pkOf(k)) ? [snapshot!.get(pkOf(k))!] : []));
      return { output: { $metadata: {}, Responses: { [db.tableName]: found }, UnprocessedKeys: {} }, response: {} };
    },
    { step: 'initialize', name: 'testStaleReader' },
  );
});
afterAll(async () => db.close());

/** Takes the snapshot the stale reader answers with from now on: the alerts' items as they are now. */
async function freeze(store: DynamoDbDedupeStore, alerts: Alert[], nowMs: number): Promise<void> {
  snapshot = undefined;
  const items = new Map<string, Answer>();
  const capture = (next: (a: unknown) => Promise<{ output: unknown }>) => async (args: unknown) => {
    const out = await next(args);
    const responses = (out.output as { Responses?: Record<string, Answer[]> }).Responses ?? {};
    for (const item of Object.values(responses).flat()) items.set(pkOf(item), item);
    return out;
  };
  db.client.middlewareStack.add(capture as never, { step: 'initialize', name: 'testFreeze' });
  try {
    await store.readMany(alerts, nowMs);
  } finally {
    db.client.middlewareStack.remove('testFreeze');
  }
  snapshot = items;
}

const dedupe = () =>
  new DynamoDbDedupeStore(db.client, { tableName: db.tableName, ttlSeconds: TTL_SECONDS, leaseMs: LEASE_MS });
const alertOf = (over: Partial<Alert> = {}): Alert => ({
  status: 'firing',
  labels: { alertname: 'KvCacheHigh', severity: 'critical' },
  annotations: {},
  startsAt: STARTS_AT,
  endsAt: '0001-01-01T00:00:00Z',
  generatorURL: '',
  fingerprint: `stale-${++n}`,
  ...over,
});
/** The pipeline's order: the group's read (the hint), then the claim from it. */
const viaHint = async (store: DynamoDbDedupeStore, a: Alert, nowMs: number): Promise<Claim> =>
  store.claim(a, ['slack', 'sns'], nowMs, (await store.readMany([a], nowMs))[0]);
/** The record write after delivery, carrying the delivery mark. */
const recordDelivered = (a: Alert, claim: Claim, nowMs: number) =>
  alertStores(db.client, { tableName: db.tableName, ttlSeconds: TTL_SECONDS }).records.recordNotified(
    {
      alert: a,
      groupKey: 'g',
      externalURL: 'http://am',
      channels: ['slack', 'sns'],
      generation: claim.event.generation,
      deliveredEvent: claim.event.key,
    },
    nowMs,
  );

describe('an eventually consistent dedupe read (a hint) on dynalite', () => {
  it('costs half a read unit per item read: a delivered duplicate, its head and its record, 1 RCU', async () => {
    snapshot = undefined;
    const s = dedupe();
    const a = alertOf();
    const claim = await viaHint(s, a, T0);
    await recordDelivered(a, claim, T0 + 10);
    hintUnits = 0;
    consistency.length = 0;
    expect((await viaHint(s, a, T0 + 20)).decision).toBe('already notified');
    expect(consistency).toEqual([false]);
    expect(hintUnits).toBe(1);
  });

  it("takes a peer's claim it did not see as what it is: the new head's conditional write fails, then a strong read", async () => {
    const s = dedupe();
    const a = alertOf();
    await freeze(s, [a], T0);
    expect(snapshot!.size).toBe(0);
    const peer = await dedupe().claim(a, ['slack', 'sns'], T0);
    expect(peer.decision).toBe('first notification');
    consistency.length = 0;
    expect((await viaHint(s, a, T0 + 5)).decision).toBe('in flight');
    expect(consistency).toEqual([false, true]);
    await recordDelivered(a, peer, T0 + 10);
    expect((await viaHint(s, a, T0 + 20)).decision).toBe('already notified');
  });

  it('never loses a new alert: an expired head that TTL just deleted, still in the stale answer, reads as absent', async () => {
    const s = dedupe();
    const a = alertOf();
    const old = await viaHint(s, a, T0);
    await recordDelivered(a, old, T0 + 10);
    const later = T0 + (TTL_SECONDS + 60) * 1000;
    await freeze(s, [a], later);
    expect(snapshot!.size).toBe(2);
    for (const pk of snapshot!.keys())
      await db.client.send(new DeleteItemCommand({ TableName: db.tableName, Key: { pk: { S: pk } } }));
    const claim = await viaHint(s, a, later);
    expect({ decision: claim.decision, pending: claim.pending }).toEqual({
      decision: 'first notification',
      pending: ['slack', 'sns'],
    });
  });

  it('never loses a new alert of a group whose read saw none of its items yet, nor claims one twice', async () => {
    const s = dedupe();
    const alerts = [alertOf(), alertOf(), alertOf()];
    await freeze(s, alerts, T0);
    const seen = await s.readMany(alerts, T0);
    const claims = await Promise.all(alerts.map((a, i) => s.claim(a, ['slack'], T0, seen[i])));
    expect(claims.map((c) => c.decision)).toEqual(Array(3).fill('first notification'));
    const again = await Promise.all(alerts.map((a, i) => s.claim(a, ['slack'], T0 + 1, seen[i])));
    expect(again.map((c) => c.decision)).toEqual(Array(3).fill('in flight'));
  });

  it('does not repair an alert delivered since the snapshot: a stale record without its mark, the lease run out', async () => {
    const s = dedupe();
    const a = alertOf();
    const claim = await viaHint(s, a, T0);
    await freeze(s, [a], T0 + 5);
    await recordDelivered(a, claim, T0 + 10);
    consistency.length = 0;
    const after = T0 + LEASE_MS + 1000;
    expect((await viaHint(s, a, after)).decision).toBe('already notified');
    expect(consistency).toEqual([false, true]);
  });

  it('renews an acknowledged firing only on what a strong read says of its silence', async () => {
    const s = dedupe();
    const a = alertOf();
    const claim = await viaHint(s, a, T0);
    await recordDelivered(a, claim, T0 + 10);
    const ack = (endsAt: string) =>
      db.client.send(
        new PutItemCommand({
          TableName: db.tableName,
          Item: {
            pk: { S: `alert#${a.fingerprint}` },
            startsAt: { S: STARTS_AT },
            deliveredEvent: { S: claim.event.key },
            expiresAt: { N: String(T0 / 1000 + TTL_SECONDS) },
            ack: { M: { silenceEndsAt: { S: endsAt } } },
          },
        }),
      );
    await ack('2026-11-29T12:10:00.000Z');
    await freeze(s, [a], T0 + 20);
    // Acknowledged again with a longer silence since the snapshot: the stale one has ended, the real one not.
    await ack('2026-11-29T14:00:00.000Z');
    consistency.length = 0;
    const afterFirst = Date.parse('2026-11-29T12:30:00.000Z');
    expect((await viaHint(s, a, afterFirst)).decision).toBe('already notified');
    expect(consistency).toEqual([false, true]);
  });
});
