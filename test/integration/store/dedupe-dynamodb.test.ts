import { GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbDedupeStore } from '../../../shared/store/dedupe-dynamodb.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../../shared/store/local-dynamodb.js';
import type { AlertEvent, Claim, ClaimedEvent } from '../../../shared/store/dedupe.js';
import { eventKey } from '../../../shared/store/keys.js';

let db: LocalDynamoDb;
let n = 0;
const T0 = Date.parse('2026-11-29T12:00:00Z');
const STARTS_AT = '2026-11-29T12:00:00Z';
const ZERO = '0001-01-01T00:00:00Z';
/** A fresh alert's firing post. */
const key = (): AlertEvent => ({ fingerprint: `test-${++n}`, startsAt: STARTS_AT, status: 'firing', endsAt: ZERO });
const resolvedOf = (a: AlertEvent, endsAt = '2026-11-29T12:06:00Z'): AlertEvent => ({
  ...a,
  status: 'resolved',
  endsAt,
});
const headKeyOf = (a: AlertEvent) => `event#${a.fingerprint}#2026-11-29T12:00:00.000Z#firing`;
const decision = (c: Claim) => ({ decision: c.decision, pending: c.pending });

beforeAll(async () => {
  db = await startLocalDynamoDb('dedupe-store-test');
});
afterAll(async () => db.close());

/** The generation-0 event of a post (what its first claim returned). */
const gen0 = (a: AlertEvent): ClaimedEvent => ({ key: eventKey(a), status: a.status, generation: 0 });

function store(leaseMs = 60_000, ttlSeconds = 3600) {
  return new DynamoDbDedupeStore(db.client, { tableName: db.tableName, ttlSeconds, leaseMs });
}

describe('DynamoDbDedupeStore against dynalite', () => {
  it('claims a new event once, for every channel', async () => {
    const s = store();
    const k = key();
    expect(decision(await s.claim(k, ['slack', 'sns'], T0))).toEqual({
      decision: 'first notification',
      pending: ['slack', 'sns'],
    });
    expect(decision(await s.claim(k, ['slack', 'sns'], T0 + 1))).toEqual({ decision: 'in flight', pending: [] });
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
    await s.markDelivered(k, gen0(k), 'slack');
    await s.markDelivered(k, gen0(k), 'sns');
    expect(decision(await s.claim(k, ['slack', 'sns'], T0 + 1))).toEqual({ decision: 'already notified', pending: [] });
    const raw = await db.client.send(new GetItemCommand({ TableName: db.tableName, Key: { pk: { S: headKeyOf(k) } } }));
    expect(raw.Item?.delivered?.SS?.sort()).toEqual(['slack', 'sns']);
    expect(raw.Item?.pending).toBeUndefined();
    expect(Number(raw.Item?.expiresAt?.N)).toBe(T0 / 1000 + 3600);
  });

  it('repairs only the undelivered channels once the lease is released', async () => {
    const s = store();
    const k = key();
    await s.claim(k, ['slack', 'feishu', 'sns'], T0);
    await s.markDelivered(k, gen0(k), 'slack');
    await s.markDelivered(k, gen0(k), 'sns');
    expect((await s.claim(k, ['slack', 'feishu', 'sns'], T0 + 1)).decision).toBe('in flight');
    await s.release(k, gen0(k));
    expect(decision(await s.claim(k, ['slack', 'feishu', 'sns'], T0 + 2))).toEqual({
      decision: 'repair',
      pending: ['feishu'],
    });
    // The repairer now holds the lease: a concurrent retry must not also repair.
    expect((await s.claim(k, ['slack', 'feishu', 'sns'], T0 + 3)).decision).toBe('in flight');
  });

  it('repairs after the lease runs out when the holder crashed without releasing', async () => {
    const s = store(1000);
    const k = key();
    await s.claim(k, ['slack'], T0);
    expect((await s.claim(k, ['slack'], T0 + 999)).decision).toBe('in flight');
    expect(decision(await s.claim(k, ['slack'], T0 + 1001))).toEqual({ decision: 'repair', pending: ['slack'] });
  });

  it('treats an expired item as absent although dynalite never deletes it', async () => {
    const s = store(60_000, 10);
    const k = key();
    await s.claim(k, ['slack'], T0);
    await s.markDelivered(k, gen0(k), 'slack');
    expect((await s.claim(k, ['slack'], T0 + 4_000)).decision).toBe('already notified');
    expect((await s.claim(k, ['slack'], T0 + 10_000)).decision).toBe('first notification');
  });

  it('keeps an alert that is still being resent past its TTL, so a long-firing alert is not announced again', async () => {
    const s = store(60_000, 100);
    const k = key();
    await s.claim(k, ['slack'], T0);
    await s.markDelivered(k, gen0(k), 'slack');
    // Resends before half the TTL change nothing; one after it extends the record past its first expiry (T0 + 100 s).
    expect((await s.claim(k, ['slack'], T0 + 40_000)).decision).toBe('already notified');
    expect((await s.claim(k, ['slack'], T0 + 60_000)).decision).toBe('already notified');
    expect((await s.claim(k, ['slack'], T0 + 100_000)).decision).toBe('already notified');
    const raw = await db.client.send(new GetItemCommand({ TableName: db.tableName, Key: { pk: { S: headKeyOf(k) } } }));
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

describe('the occurrence state machine (shared/store/occurrence.ts) on dynalite', () => {
  const all = ['slack', 'sns'];
  async function deliverAll(s: DynamoDbDedupeStore, a: AlertEvent, c: Claim) {
    await s.markDelivered(a, c.event, c.pending);
  }

  it('claims a firing, its resolve, the firing again one generation on, and then the resolve of the re-fire', async () => {
    const s = store();
    const f = key();
    const r = resolvedOf(f);
    const c1 = await s.claim(f, all, T0);
    await deliverAll(s, f, c1);
    const c2 = await s.claim(r, all, T0 + 1);
    expect([c2.decision, c2.event.generation, c2.event.key]).toEqual(['first notification', 0, eventKey(r)]);
    await deliverAll(s, r, c2);
    const c3 = await s.claim(f, all, T0 + 2);
    expect([c3.decision, c3.event.generation]).toEqual(['resolved before', 0]);
    const again = await s.confirm(f, c3, all, T0 + 3);
    expect(decision(again)).toEqual({ decision: 'firing again', pending: all });
    expect(again.event).toEqual({ key: `${eventKey(f)}#1`, status: 'firing', generation: 1 });
    await deliverAll(s, f, again);
    expect((await s.claim(f, all, T0 + 4)).decision).toBe('already notified');
    const r2 = await s.claim(resolvedOf(f, '2026-11-29T12:20:00Z'), all, T0 + 5);
    expect([r2.decision, r2.event.key]).toEqual(['first notification', `${eventKey(r)}#1`]);
  });

  it('lets one of two concurrent re-fires win', async () => {
    const s = store();
    const f = key();
    await deliverAll(s, f, await s.claim(f, all, T0));
    await deliverAll(s, resolvedOf(f), await s.claim(resolvedOf(f), all, T0 + 1));
    const candidate = await s.claim(f, all, T0 + 2);
    const both = await Promise.all([s.confirm(f, candidate, all, T0 + 3), s.confirm(f, candidate, all, T0 + 3)]);
    expect(both.map((c) => c.decision).sort()).toEqual(['firing again', 'in flight']);
  });

  it('holds a resolve while its firing is being delivered, so no channel gets RESOLVED before FIRING', async () => {
    const s = store();
    const f = key();
    const c1 = await s.claim(f, all, T0);
    expect((await s.claim(resolvedOf(f), all, T0 + 1)).decision).toBe('in flight');
    await s.markDelivered(f, c1.event, 'slack');
    await s.release(f, c1.event);
    // sns failed and the lease is free: the resolve goes to both, sns never gets the firing.
    expect(decision(await s.claim(resolvedOf(f), all, T0 + 2))).toEqual({
      decision: 'first notification',
      pending: all,
    });
  });

  it('asks about a resolve after the re-fire that is no newer than the resolve before it, and claims it once confirmed', async () => {
    const s = store();
    const f = key();
    await deliverAll(s, f, await s.claim(f, all, T0));
    await deliverAll(s, resolvedOf(f), await s.claim(resolvedOf(f), all, T0 + 1));
    await deliverAll(s, f, await s.confirm(f, await s.claim(f, all, T0 + 2), all, T0 + 3));
    const candidate = await s.claim(resolvedOf(f), all, T0 + 4);
    expect([candidate.decision, candidate.event.generation]).toEqual(['fired again since', 1]);
    expect((await s.claim(resolvedOf(f, '2026-11-29T12:05:00Z'), all, T0 + 4)).decision).toBe('fired again since');
    const confirmed = await s.confirm(resolvedOf(f), candidate, all, T0 + 5);
    expect([confirmed.decision, confirmed.event.key]).toEqual(['first notification', `${eventKey(resolvedOf(f))}#1`]);
    const later = key();
    await deliverAll(s, later, await s.claim(later, all, T0));
    await deliverAll(s, resolvedOf(later), await s.claim(resolvedOf(later), all, T0 + 1));
    await deliverAll(s, later, await s.confirm(later, await s.claim(later, all, T0 + 2), all, T0 + 3));
    expect((await s.claim(resolvedOf(later, '2026-11-29T12:30:00Z'), all, T0 + 5)).decision).toBe('first notification');
  });

  it('ignores a late ledger write or release of a state the occurrence has left', async () => {
    const s = store();
    const f = key();
    const c1 = await s.claim(f, all, T0);
    await s.release(f, c1.event);
    const c2 = await s.claim(resolvedOf(f), all, T0 + 1);
    await s.markDelivered(f, c1.event, all);
    await s.release(f, c1.event);
    expect((await s.claim(resolvedOf(f), all, T0 + 2)).decision).toBe('in flight');
    await deliverAll(s, resolvedOf(f), c2);
    expect((await s.claim(resolvedOf(f), all, T0 + 3)).decision).toBe('already notified');
  });

  it('keeps the meaning of items written before generations: no announcement again after an upgrade', async () => {
    const s = store();
    const f = key();
    const legacy = (a: AlertEvent) => ({
      pk: { S: eventKey(a) },
      delivered: { SS: all },
      leaseUntil: { N: String(T0) },
      claimedAt: { N: String(T0) },
      expiresAt: { N: String(T0 / 1000 + 3600) },
    });
    await db.client.send(new PutItemCommand({ TableName: db.tableName, Item: legacy(f) }));
    expect((await s.claim(f, all, T0 + 1)).decision).toBe('already notified');
    await db.client.send(new PutItemCommand({ TableName: db.tableName, Item: legacy(resolvedOf(f)) }));
    const g = key();
    await db.client.send(new PutItemCommand({ TableName: db.tableName, Item: legacy(g) }));
    await db.client.send(new PutItemCommand({ TableName: db.tableName, Item: legacy(resolvedOf(g)) }));
    expect((await s.claim(resolvedOf(g), all, T0 + 2)).decision).toBe('already notified');
    // A legacy resolved occurrence sent firing again is a candidate re-fire, as any other.
    expect((await s.claim(g, all, T0 + 3)).decision).toBe('resolved before');
  });

  it('reads items written before generations right after a batched read, which leaves their resolve item out', async () => {
    const s = store();
    const legacy = (a: AlertEvent) => ({
      pk: { S: eventKey(a) },
      delivered: { SS: all },
      leaseUntil: { N: String(T0) },
      claimedAt: { N: String(T0) },
      expiresAt: { N: String(T0 / 1000 + 3600) },
    });
    const put = (a: AlertEvent) => db.client.send(new PutItemCommand({ TableName: db.tableName, Item: legacy(a) }));
    const viaRead = async (a: AlertEvent, nowMs: number) => s.claim(a, all, nowMs, (await s.readMany([a], nowMs))[0]);
    // Announced firing, then resolved, by the old version: a resend of either is a duplicate; a firing again a candidate.
    const f = key();
    await put(f);
    await put(resolvedOf(f));
    expect((await viaRead(resolvedOf(f), T0 + 1)).decision).toBe('already notified');
    expect((await viaRead(f, T0 + 2)).decision).toBe('resolved before');
    // A resolve whose firing never came, announced by the old version: its resend is a duplicate, not a new resolve.
    const r = key();
    await put(resolvedOf(r));
    expect((await viaRead(resolvedOf(r), T0 + 3)).decision).toBe('already notified');
    // A legacy firing announced, not resolved: its resend is a duplicate.
    const g = key();
    await put(g);
    expect((await viaRead(g, T0 + 4)).decision).toBe('already notified');
  });
});
