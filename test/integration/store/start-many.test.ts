/**
 * Batched claims on a table this process alone writes (`shared/store/start-many.ts`): new heads in a
 * few requests under in-process key locks, as exclusive as one conditional write per alert. Checked
 * on dynalite through the real store and pipeline: one winner per alert among batched and single
 * claims racing, expired and legacy heads, and the requests a group costs (counts, not timings).
 */
import { GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Alert, WebhookMessage } from '../../../shared/alertmanager/schema.js';
import type { Channel } from '../../../shared/channels/channel.js';
import { silentLogger } from '../../../shared/core/logger.js';
import type { Enrichment } from '../../../shared/enrich/types.js';
import { AckTracker } from '../../../shared/ack/tracker.js';
import { processGroup, type PipelineDeps } from '../../../shared/pipeline/index.js';
import { DynamoDbAlertRecordStore } from '../../../shared/store/alert-record-dynamodb.js';
import { historyKey } from '../../../shared/store/alert-record-items.js';
import type { HistoryBatch, NotifiedAlert } from '../../../shared/store/alert-record.js';
import { DynamoDbDedupeStore } from '../../../shared/store/dedupe-dynamodb.js';
import { eventKey, type AlertEvent, type Claim } from '../../../shared/store/dedupe.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../../shared/store/local-dynamodb.js';
import { countCommands } from '../../helpers/count-commands.js';
import { webhookGroup } from '../../helpers/webhook.js';

const T0 = Date.parse('2026-11-29T12:00:00Z');
const STARTS_AT = '2026-11-29T12:00:00.000Z';
const ZERO = '0001-01-01T00:00:00Z';
const TTL_SECONDS = 3600;
let db: LocalDynamoDb;
let n = 0;
let counts = new Map<string, number>();

beforeAll(async () => {
  db = await startLocalDynamoDb('start-many-test');
  counts = countCommands(db.client);
});
afterAll(async () => db.close());

const store = (exclusive = true) => new DynamoDbDedupeStore(db.client, { tableName: db.tableName, ttlSeconds: TTL_SECONDS, exclusive });
const alertOf = (over: Partial<Alert> = {}): Alert => ({
  status: 'firing',
  labels: { alertname: 'KvCacheHigh', severity: 'critical' },
  annotations: {},
  startsAt: STARTS_AT,
  endsAt: ZERO,
  generatorURL: '',
  fingerprint: `many-${++n}`,
  ...over,
});
const channels = ['slack', 'sns'];

/** Reads the alerts in one batch, then claims them in batches (`startMany`), the rest one by one, as the pipeline does. */
async function claimAll(s: DynamoDbDedupeStore, alerts: AlertEvent[], nowMs: number): Promise<Claim[]> {
  const seen = await s.readMany(alerts, nowMs);
  const started = await s.startMany(
    alerts.map((alert, i) => ({ alert, channels, seen: seen[i] })),
    nowMs,
  );
  return Promise.all(alerts.map((a, i) => started[i] ?? s.claim(a, channels, nowMs, seen[i])));
}

async function requests(run: () => Promise<unknown>): Promise<Record<string, number>> {
  counts.clear();
  await run();
  return Object.fromEntries(counts);
}

describe('batched claims on an exclusive table', () => {
  it('claims new firings in batched requests, once: a second round finds them claimed', async () => {
    const s = store();
    const alerts = Array.from({ length: 30 }, () => alertOf());
    let first: Claim[] = [];
    // One read (no write since it: no re-read under the locks), 30 heads in two BatchWriteItem: no PutItem per alert.
    expect(await requests(async () => (first = await claimAll(s, alerts, T0)))).toEqual({ BatchGetItem: 1, BatchWriteItem: 2 });
    expect(first.every((c) => c.decision === 'first notification' && c.pending.join() === channels.join())).toBe(true);
    expect((await claimAll(s, alerts, T0 + 1)).map((c) => c.decision)).toEqual(alerts.map(() => 'in flight'));
  });

  it('reads the heads again under the locks when any write was sent after the batched read, and then leaves a head claimed meanwhile to its owner', async () => {
    const s = store();
    const alerts = Array.from({ length: 10 }, () => alertOf());
    const seen = await s.readMany(alerts, T0);
    // Another claimer (another store on the same client: this process) takes one alert between the read and the batch.
    expect((await store().claim(alerts[3]!, channels, T0)).decision).toBe('first notification');
    counts.clear();
    const started = await s.startMany(
      alerts.map((alert, i) => ({ alert, channels, seen: seen[i] })),
      T0,
    );
    expect(Object.fromEntries(counts)).toEqual({ BatchGetItem: 1, BatchWriteItem: 1 });
    expect(started.map((c) => c?.decision)).toEqual(alerts.map((_, i) => (i === 3 ? undefined : 'first notification')));
    expect((await s.claim(alerts[3]!, channels, T0, seen[3])).decision).toBe('in flight');
  });

  it('lets exactly one claimer win each alert when batched and single claims race', async () => {
    const alerts = Array.from({ length: 40 }, () => alertOf());
    const rounds = await Promise.all([
      claimAll(store(), alerts, T0),
      claimAll(store(), alerts, T0),
      Promise.all(alerts.map((a) => store().claim(a, channels, T0))),
      claimAll(store(), alerts.slice(10), T0),
    ]);
    for (const a of alerts) {
      const wins = rounds.flatMap((round) => round.filter((c) => c.event.key === eventKey(a) && c.decision === 'first notification'));
      expect(wins).toHaveLength(1);
    }
  });

  it('re-creates an expired head, and leaves live heads of any shape (legacy, resolved) to the single claim', async () => {
    const s = store();
    const expired = alertOf();
    await s.claim(expired, channels, T0);
    const later = T0 + (TTL_SECONDS + 1) * 1000;
    const legacy = alertOf();
    await db.client.send(
      new PutItemCommand({
        TableName: db.tableName,
        Item: { pk: { S: eventKey(legacy) }, delivered: { SS: channels }, leaseUntil: { N: String(later) }, claimedAt: { N: String(later) }, expiresAt: { N: String(later / 1000 + 3600) } },
      }),
    );
    const resolvedNew = alertOf({ status: 'resolved', endsAt: '2026-11-29T12:06:00.000Z' });
    const claims = await claimAll(s, [expired, legacy, resolvedNew], later);
    expect(claims.map((c) => c.decision)).toEqual(['first notification', 'already notified', 'first notification']);
  });

  it('claims fewer new alerts than a batch is worth one by one (a one-alert group costs no extra read)', async () => {
    const alerts = [alertOf(), alertOf()];
    expect(await requests(() => claimAll(store(), alerts, T0))).toEqual({ BatchGetItem: 1, PutItem: 2 });
  });

  it('sends no request for the batch on a table other processes write (one conditional write per new alert)', async () => {
    const s = store(false);
    const alerts = Array.from({ length: 5 }, () => alertOf());
    expect(await requests(() => claimAll(s, alerts, T0))).toEqual({ BatchGetItem: 1, PutItem: 5 });
  });
});

class Accepting implements Channel {
  constructor(readonly name: string) {}
  async send(): Promise<void> {}
}

const records = (exclusive = true) => new DynamoDbAlertRecordStore(db.client, { tableName: db.tableName, ttlSeconds: TTL_SECONDS, exclusive });

function pipeline(withRecords = false): PipelineDeps {
  const now = () => T0 + 1000;
  return {
    ...(withRecords && { ack: new AckTracker({ store: records(), logger: silentLogger, now }) }),
    store: store(),
    channels: channels.map((c) => new Accepting(c)),
    enrich: async (alerts) => new Map<string, Enrichment>(alerts.map((a) => [a.fingerprint, { status: 'unavailable', kind: 'kv_cache', reason: 'test' }])),
    delivery: { timeoutMs: 2000, retries: 0 },
    flapWindowMs: 0,
    logger: silentLogger,
    now: () => T0 + 1000,
  };
}

const group = (alerts: Alert[]): WebhookMessage => webhookGroup(alerts, `{}:{n="${++n}"}`);

describe('the pipeline on an exclusive table', () => {
  it('delivers a new group once, and its resend not again', async () => {
    const deps = pipeline();
    const message = group(Array.from({ length: 60 }, () => alertOf()));
    const first = await processGroup(message, deps);
    expect(first).toMatchObject({ received: 60, notified: 60, ok: true });
    expect(await processGroup(message, deps)).toMatchObject({ received: 60, notified: 0, duplicates: 60, ok: true });
  });
});

describe('batched record writes on an exclusive table', () => {
  const notified = (alert: Alert, over: Partial<NotifiedAlert> = {}): NotifiedAlert => ({ alert, groupKey: 'g', externalURL: 'http://am', channels, deliveredEvent: eventKey(alert), ...over });
  const flush = async (store: DynamoDbAlertRecordStore, batch: HistoryBatch) => store.flushHistory(batch);

  it('writes a new occurrence as recordNotified does: ack and escalation of the older one gone, history counted on', async () => {
    const old = alertOf({ startsAt: '2026-11-28T12:00:00.000Z' });
    const single = records(false);
    await single.recordNotified(notified(old), T0);
    await single.acknowledge(old.fingerprint, { by: 'ann', at: '2026-11-28T12:01:00.000Z', channel: 'slack' }, T0, T0);
    await single.scheduleEscalation(old.fingerprint, '2026-11-28T12:00:00.000Z', T0 + 60_000, T0);
    const current = { ...old, startsAt: STARTS_AT };
    const twin = alertOf();
    await single.recordNotified(notified(twin), T0 + 10);
    const batch: HistoryBatch = { items: [] };
    // Batched with two more new alerts: a batch takes at least MIN_BATCH (3).
    const [written] = await records().recordManyNotified!([notified(current), notified(alertOf()), notified(alertOf())], T0 + 10, batch);
    await flush(records(), batch);
    expect(written).toMatchObject({ newOccurrence: true, record: { startsAt: STARTS_AT, status: 'firing', channels } });
    const got = await single.get(old.fingerprint, T0 + 20);
    const same = await single.get(twin.fingerprint, T0 + 20);
    // Field for field what the single write leaves (but the fingerprint): no acknowledgement, no escalation.
    expect({ ...got, fingerprint: '', alert: { ...got!.alert, fingerprint: '' } }).toEqual({ ...same, fingerprint: '', alert: { ...same!.alert, fingerprint: '' } });
    expect((await single.history(old.fingerprint, 10, T0 + 20)).map((e) => e.startsAt)).toEqual(['2026-11-28T12:00:00.000Z', STARTS_AT]);
  });

  it('keeps a batched record’s history event in the record (no history item), and moves it to its item when a later occurrence replaces the record', async () => {
    const [a, b, c] = [alertOf({ startsAt: '2026-11-28T12:00:00.000Z' }), alertOf(), alertOf()];
    const batch: HistoryBatch = { items: [] };
    await records().recordManyNotified!([notified(a), notified(b), notified(c)], T0, batch);
    expect(batch.items).toEqual([]);
    const historyItem = async (fp: string, seq: number) => (await db.client.send(new GetItemCommand({ TableName: db.tableName, Key: { pk: { S: historyKey(fp, seq) } }, ConsistentRead: true }))).Item;
    expect(await historyItem(a.fingerprint, 1)).toBeUndefined();
    await records().addHistory(a.fingerprint, { type: 'escalation scheduled', dueAt: '2026-11-28T12:05:00.000Z', startsAt: '2026-11-28T12:00:00.000Z' }, T0 + 1);
    const later = { ...a, startsAt: STARTS_AT };
    await records().recordManyNotified!([notified(later), notified(alertOf()), notified(alertOf())], T0 + 2, batch);
    expect(batch.items).toHaveLength(1);
    await flush(records(), batch);
    expect(await historyItem(a.fingerprint, 1)).toBeDefined();
    const events = await records().history(a.fingerprint, 10, T0 + 3);
    expect(events.map((e) => [e.type, e.startsAt, e.at])).toEqual([
      ['notified', '2026-11-28T12:00:00.000Z', new Date(T0).toISOString()],
      ['escalation scheduled', '2026-11-28T12:00:00.000Z', new Date(T0 + 1).toISOString()],
      ['notified', STARTS_AT, new Date(T0 + 2).toISOString()],
    ]);
    expect((await records().history(a.fingerprint, 1, T0 + 3)).map((e) => e.startsAt)).toEqual([STARTS_AT]);
    expect(await records().history(b.fingerprint, 10, T0 + 3)).toEqual([{ at: new Date(T0).toISOString(), type: 'notified', status: 'firing', channels, startsAt: STARTS_AT }]);
  });

  it('leaves a write to the same occurrence (a resolve) to recordNotified', async () => {
    const a = alertOf();
    await records().recordNotified(notified(a), T0);
    const resolved = { ...a, status: 'resolved' as const, endsAt: '2026-11-29T12:06:00.000Z' };
    const results = await records().recordManyNotified!([notified(resolved), notified(alertOf()), notified(alertOf())], T0 + 10, { items: [] });
    expect(results.map((r) => (r === null ? null : r?.newOccurrence))).toEqual([null, true, true]);
  });

  it('does not read again, under the locks, records that the group’s read found absent while no record was written since', async () => {
    const deps = pipeline(true);
    const message = group(Array.from({ length: 10 }, () => alertOf()));
    // The group's read (heads and records), then 10 heads and 10 records in a BatchWriteItem each: no read under the locks.
    expect(await requests(() => processGroup(message, deps))).toEqual({ BatchGetItem: 1, BatchWriteItem: 2 });
    expect(await requests(() => processGroup(message, deps))).toEqual({ BatchGetItem: 1 });
    expect((await records().history(message.alerts[3]!.fingerprint, 10, T0 + 2000)).map((e) => e.type)).toEqual(['notified']);
  });

  it('reads a record again under the locks when any record was written after the group’s read found it absent', async () => {
    const s = store();
    const [a, b, c] = [alertOf(), alertOf(), alertOf()];
    const seen = await s.readMany([a, b, c], T0);
    const absentAt = seen.map((x) => s.recordAbsent(x!));
    expect(absentAt.every((m) => m !== undefined)).toBe(true);
    // A head write does not change what was read of the records.
    await claimAll(s, [alertOf()], T0);
    const unchanged: HistoryBatch = { items: [] };
    counts.clear();
    const results = await records().recordManyNotified!(
      [b, c, alertOf()].map((x, i) => notified(x, { recordAbsentAt: i < 2 ? absentAt[i + 1]! : absentAt[0]! })),
      T0 + 1,
      unchanged,
    );
    expect(results.map((r) => r?.newOccurrence)).toEqual([true, true, true]);
    expect(Object.fromEntries(counts)).toEqual({ BatchWriteItem: 1 });
    // Another request records `a` meanwhile: its record is read again (the batch leaves it to the single write), the others' too.
    await records().recordNotified(notified(a), T0 + 2);
    counts.clear();
    const after = await records().recordManyNotified!(
      [a, alertOf(), alertOf()].map((x) => notified(x, { recordAbsentAt: absentAt[0]! })),
      T0 + 3,
      { items: [] },
    );
    expect(after.map((r) => (r === null ? null : r?.newOccurrence))).toEqual([null, true, true]);
    expect(Object.fromEntries(counts)).toEqual({ BatchGetItem: 1, BatchWriteItem: 1 });
    expect((await records().history(a.fingerprint, 10, T0 + 4)).map((e) => e.type)).toEqual(['notified']);
  });

  it('records a new group in batched requests, and reads the resend as duplicates (the delivery mark stands)', async () => {
    const deps = pipeline(true);
    const message = group(Array.from({ length: 60 }, () => alertOf()));
    // Reads: the group, the heads and the records under their locks (the records in one batch per turn of
    // the event loop in which alerts were accepted); writes: 60 heads, 60 records, 60 history events, 25 a request.
    const counted = await requests(() => processGroup(message, deps));
    expect(Object.keys(counted).sort()).toEqual(['BatchGetItem', 'BatchWriteItem']);
    expect(counted.BatchGetItem! + counted.BatchWriteItem!).toBeLessThanOrEqual(15);
    // 120 keys (head and record of each): two BatchGetItem, no write.
    expect(await requests(() => processGroup(message, deps))).toEqual({ BatchGetItem: 2 });
    expect(await processGroup(message, deps)).toMatchObject({ notified: 0, duplicates: 60 });
  });
});
