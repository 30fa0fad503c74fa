/**
 * Items already in deployed tables keep their meaning: `test/fixtures/store/stored-items.json` holds items as
 * the store wrote them before every write was a single-item conditional write (records by the single write
 * and by the embedded store's batched put, their history items, heads, an alert set), with what that code read
 * back from them. Written to dynalite as they were, they read back the same through today's stores: records,
 * history (each event once, in order), scheduled escalations, the set, and the claims of resends.
 */
import { readFileSync } from 'node:fs';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Alert } from '../../../shared/alertmanager/schema.js';
import { DynamoDbAlertSetStore } from '../../../shared/store/alert-set.js';
import { alertStores } from '../../../shared/store/alert-stores.js';
import { DynamoDbDedupeStore } from '../../../shared/store/dedupe-dynamodb.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../../shared/store/local-dynamodb.js';

interface Fixture {
  now: number;
  items: Record<string, unknown>[];
  reads: Record<string, { record: unknown; history: unknown[] }>;
  scheduled: unknown[];
  set: unknown;
  claims: { resend: string; resolvedResend: string };
}
const fixture = JSON.parse(
  readFileSync(new URL('../../fixtures/store/stored-items.json', import.meta.url), 'utf8'),
) as Fixture;
/** The fixture's encoding back to what the document client writes: `{"$set": [...]}` is a string set. */
const decoded = (item: Record<string, unknown>) =>
  Object.fromEntries(
    Object.entries(item).map(([k, v]) =>
      v && typeof v === 'object' && '$set' in v ? [k, new Set((v as { $set: string[] }).$set)] : [k, v],
    ),
  );
/** A record as the fixture wrote it: its NaN values as "NaN". */
const comparable = (value: unknown) =>
  JSON.parse(JSON.stringify(value, (_k, v) => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v)));

let db: LocalDynamoDb;
beforeAll(async () => {
  db = await startLocalDynamoDb('stored-items');
  const doc = DynamoDBDocumentClient.from(db.client);
  for (const item of fixture.items) await doc.send(new PutCommand({ TableName: db.tableName, Item: decoded(item) }));
});
afterAll(() => db.close());

describe('items written before single-item writes everywhere', () => {
  const stores = () => alertStores(db.client, { tableName: db.tableName, ttlSeconds: 86_400 });

  it('read back as the same records and the same history, each event once and in order', async () => {
    const { records, history } = stores();
    for (const [fingerprint, read] of Object.entries(fixture.reads)) {
      expect(comparable(await records.get(fingerprint, fixture.now)), fingerprint).toEqual(read.record);
      expect(await history.last(fingerprint, 20, fixture.now), fingerprint).toEqual(read.history);
    }
  });

  it('list the same scheduled escalations and the same alert set', async () => {
    expect(await stores().escalations.scheduled(fixture.now)).toEqual(fixture.scheduled);
    const sets = new DynamoDbAlertSetStore(db.client, { tableName: db.tableName });
    expect(await sets.get('set-today', fixture.now)).toEqual(fixture.set);
  });

  it('dedupe resends as before: a firing delivered by its record’s mark, a resolve delivered by its head', async () => {
    const dedupe = new DynamoDbDedupeStore(db.client, { tableName: db.tableName, ttlSeconds: 86_400 });
    const firing = alertOf('today-shared-1');
    const resolved = { ...alertOf('today-shared-2'), status: 'resolved' as const, endsAt: '2026-11-29T12:05:00Z' };
    const [seenFiring, seenResolved] = await dedupe.readMany([firing, resolved], fixture.now);
    expect((await dedupe.claim(firing, ['slack', 'sns'], fixture.now, seenFiring)).decision).toBe(
      fixture.claims.resend,
    );
    expect((await dedupe.claim(resolved, ['slack'], fixture.now, seenResolved)).decision).toBe(
      fixture.claims.resolvedResend,
    );
  });

  it('keep a later occurrence’s write moving the event a record held to its own history item', async () => {
    const { records, history } = stores();
    const alert = { ...alertOf('today-batch-2'), startsAt: '2026-11-29T14:00:00Z' };
    await records.recordNotified(
      { alert, groupKey: 'g', externalURL: 'http://am:9093', channels: ['sns'] },
      fixture.now,
    );
    expect((await history.last('today-batch-2', 20, fixture.now)).map((e) => [e.type, e.startsAt])).toEqual([
      ['notified', '2026-11-29T11:58:00.123Z'],
      ['notified', '2026-11-29T14:00:00.000Z'],
    ]);
  });
});

function alertOf(fingerprint: string): Alert {
  return (fixture.reads[fingerprint]!.record as { alert: Alert }).alert;
}
