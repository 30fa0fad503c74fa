/**
 * A shared table's record writes of new alerts in TransactWriteItems (`shared/store/record-transactions.ts`):
 * a group of new alerts costs one write request per 100 after delivery instead of one per alert, and every
 * guarantee of the single writes holds — a record written between the group's read and the transaction
 * (an HA peer, an acknowledgement) is left to the single write, which keeps its history and acknowledgement;
 * nothing is lost or written twice. Checked on dynalite through the real SDK and the pipeline (the
 * transactions through `dynalite-transactions.ts`); counts, not timings.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import dynalite from 'dynalite';
import type { AddressInfo } from 'node:net';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { AckTracker } from '../../../shared/ack/tracker.js';
import type { Alert, WebhookMessage } from '../../../shared/alertmanager/schema.js';
import type { Channel } from '../../../shared/channels/channel.js';
import { silentLogger } from '../../../shared/core/logger.js';
import type { Enrichment } from '../../../shared/enrich/types.js';
import { processGroup, type PipelineDeps } from '../../../shared/pipeline/index.js';
import type { Notification } from '../../../shared/render/notification.js';
import { DynamoDbAlertRecordStore } from '../../../shared/store/alert-record-dynamodb.js';
import type { AlertRecordStore, HistoryBatch, NotifiedAlert } from '../../../shared/store/alert-record.js';
import { DynamoDbDedupeStore } from '../../../shared/store/dedupe-dynamodb.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../../shared/store/local-dynamodb.js';
import { ensureTable } from '../../../shared/store/table.js';
import { countCommands } from '../../helpers/count-commands.js';
import { webhookGroup } from '../../helpers/webhook.js';

const T0 = Date.parse('2026-11-29T12:00:00Z');
const S1 = '2026-11-29T12:00:00.000Z';
const S2 = '2026-11-29T13:00:00.000Z';
const CHANNELS = ['slack', 'feishu', 'sns'];
let db: LocalDynamoDb;
let n = 0;
let counts = new Map<string, number>();

beforeAll(async () => {
  db = await startLocalDynamoDb('record-transactions-test');
  counts = countCommands(db.client);
});
afterAll(async () => db.close());

const dedupe = () => new DynamoDbDedupeStore(db.client, { tableName: db.tableName, ttlSeconds: 3600 });
const records = () => new DynamoDbAlertRecordStore(db.client, { tableName: db.tableName, ttlSeconds: 3600 });
const alertOf = (over: Partial<Alert> = {}): Alert => ({
  status: 'firing',
  labels: { alertname: 'KvCacheHigh', severity: 'critical', n: String(++n) },
  annotations: {},
  startsAt: S1,
  endsAt: '0001-01-01T00:00:00Z',
  generatorURL: '',
  fingerprint: `txn-${n}`,
  ...over,
});
const group = (alerts: Alert[]): WebhookMessage => webhookGroup(alerts, `{}:{g="${++n}"}`);

class Accepting implements Channel {
  received: Notification[] = [];
  constructor(readonly name: string) {}
  async send(notification: Notification): Promise<void> {
    this.received.push(notification);
  }
}

function pipeline(recordStore: AlertRecordStore = records()): Omit<PipelineDeps, 'channels'> & { channels: Accepting[] } {
  const now = () => T0 + 1000;
  return {
    store: dedupe(),
    channels: CHANNELS.map((c) => new Accepting(c)),
    enrich: async (alerts) => new Map<string, Enrichment>(alerts.map((a) => [a.fingerprint, { status: 'unavailable', kind: 'kv_cache', reason: 'test' }])),
    delivery: { timeoutMs: 2000, retries: 0 },
    flapWindowMs: 0,
    logger: silentLogger,
    now,
    ack: new AckTracker({ store: recordStore, logger: silentLogger, now }),
  };
}

async function requests(run: () => Promise<unknown>): Promise<Record<string, number>> {
  counts.clear();
  await run();
  return Object.fromEntries(counts);
}

/** Each alert's history as [type, startsAt, channels]. */
async function histories(store: AlertRecordStore, alerts: Alert[]) {
  return Promise.all(alerts.map(async (a) => (await store.history(a.fingerprint, 20, T0 + 5000)).map((e) => [e.type, e.startsAt, 'channels' in e ? e.channels : 'by' in e ? e.by : ''])));
}

describe('record writes of new alerts on a shared table, in transactions', () => {
  it('costs a 10- and a 100-alert group of new alerts one TransactWriteItems after delivery; records and history as the single writes leave them', async () => {
    const deps = pipeline();
    for (const size of [10, 100]) {
      const alerts = Array.from({ length: size }, () => alertOf());
      // Before: one conditional UpdateItem per alert (10, 100).
      expect(await requests(() => processGroup(group(alerts), deps))).toEqual({ BatchGetItem: 1, PutItem: size, TransactWriteItems: 1 });
      const store = records();
      for (const a of alerts) {
        const record = await store.get(a.fingerprint, T0 + 5000);
        expect(record).toMatchObject({ fingerprint: a.fingerprint, startsAt: S1, status: 'firing', channels: [...CHANNELS].sort(), groupKey: expect.any(String) });
        expect(record?.enrichment).toMatchObject({ status: 'unavailable' });
      }
      expect(await histories(store, alerts)).toEqual(alerts.map(() => [['notified', S1, [...CHANNELS].sort()]]));
      // The delivery mark rode in the transaction: the repeat is a duplicate, one read and no write.
      expect(await requests(() => processGroup(group(alerts), deps))).toMatchObject({ BatchGetItem: expect.any(Number) });
      expect(counts.has('PutItem') || counts.has('UpdateItem') || counts.has('TransactWriteItems')).toBe(false);
      expect(deps.channels.every((c) => c.received.flatMap((m) => m.alerts).filter((x) => alerts.some((a) => a.fingerprint === x.fingerprint)).length === size)).toBe(true);
    }
  });

  it('leaves a record written between the group read and the transaction (an HA peer, then an acknowledgement) to the single write: ack and history kept', async () => {
    const base = records();
    const alerts = Array.from({ length: 10 }, () => alertOf());
    const raced = alerts.slice(0, 3);
    // The HA peer records three of the alerts (one channel) and one is acknowledged, just before this process's transaction.
    const racing = new Proxy(base, {
      get: (target, key: keyof DynamoDbAlertRecordStore) => {
        if (key !== 'recordManyNotified') return (target[key] as (...args: unknown[]) => unknown)?.bind(target);
        return async (list: NotifiedAlert[], nowMs: number, batch: HistoryBatch) => {
          const peer = records();
          for (const a of raced) await peer.recordNotified({ alert: a, groupKey: 'g', externalURL: 'http://am', channels: ['slack'] }, nowMs - 1);
          expect((await peer.acknowledge(raced[0]!.fingerprint, { by: 'ann', at: new Date(nowMs).toISOString(), channel: 'slack' }, nowMs, nowMs)).outcome).toBe('acknowledged');
          await peer.addHistory(raced[0]!.fingerprint, { type: 'acknowledged', by: 'ann', channel: 'slack', startsAt: S1 }, nowMs);
          return target.recordManyNotified!(list, nowMs, batch);
        };
      },
    }) as AlertRecordStore;
    const cost = await requests(() => processGroup(group(alerts), pipeline(racing)));
    // The cancelled transaction, the one of the seven others, the three single writes (and the peer's own requests).
    expect(cost.TransactWriteItems).toBe(2);
    const store = records();
    expect((await store.get(raced[0]!.fingerprint, T0 + 5000))?.acknowledgement).toMatchObject({ by: 'ann' });
    for (const a of raced) expect((await store.get(a.fingerprint, T0 + 5000))?.channels).toEqual([...CHANNELS, 'slack'].filter((c, i, all) => all.indexOf(c) === i).sort());
    const events = await histories(store, alerts);
    expect(events[0]).toEqual([
      ['notified', S1, ['slack']],
      ['acknowledged', S1, 'ann'],
      ['notified', S1, [...CHANNELS].sort()],
    ]);
    for (const e of events.slice(1, 3))
      expect(e).toEqual([
        ['notified', S1, ['slack']],
        ['notified', S1, [...CHANNELS].sort()],
      ]);
    for (const e of events.slice(3)) expect(e).toEqual([['notified', S1, [...CHANNELS].sort()]]);
  });

  it('leaves a new occurrence of a known alert to the single write, which moves the earlier occurrence’s event to history', async () => {
    const store = records();
    const known = alertOf();
    await store.recordNotified({ alert: known, groupKey: 'g', externalURL: 'http://am', channels: ['slack'] }, T0);
    const fresh = Array.from({ length: 4 }, () => alertOf());
    const list = [{ ...known, startsAt: S2 }, ...fresh].map((alert): NotifiedAlert => ({ alert, groupKey: 'g', externalURL: 'http://am', channels: ['sns'] }));
    const batch: HistoryBatch = { items: [] };
    counts.clear();
    const results = await store.recordManyNotified!(list, T0 + 10, batch);
    // The known alert's write failed its condition: left to `recordNotified` (null); the transaction was tried again without it.
    expect(Object.fromEntries(counts)).toEqual({ TransactWriteItems: 2 });
    expect(results[0]).toBeNull();
    expect(results.slice(1).map((r) => r?.newOccurrence)).toEqual([true, true, true, true]);
    await store.recordNotified(list[0]!, T0 + 10, batch);
    await store.flushHistory(batch);
    expect(await histories(store, [known])).toEqual([
      [
        ['notified', S1, ['slack']],
        ['notified', S2, ['sns']],
      ],
    ]);
  });

  it('splits the writes into transactions of at most 100, and of at most 3 MB of values (DynamoDB refuses over 4 MB)', async () => {
    const store = records();
    const notify = (alert: Alert): NotifiedAlert => ({ alert, groupKey: 'g', externalURL: 'http://am', channels: ['sns'] });
    counts.clear();
    const small = await store.recordManyNotified!(
      Array.from({ length: 150 }, () => notify(alertOf())),
      T0,
      { items: [] },
    );
    expect(Object.fromEntries(counts)).toEqual({ TransactWriteItems: 2 });
    expect(small.every((r) => r?.newOccurrence)).toBe(true);
    // 20 records of ~200 KB (an alert's annotations, within a record's 256 KB of JSON): 4 MB in all.
    const large = Array.from({ length: 20 }, () => notify(alertOf({ annotations: { runbook: 'x'.repeat(200_000) } })));
    counts.clear();
    const written = await store.recordManyNotified!(large, T0, { items: [] });
    expect(Object.fromEntries(counts)).toEqual({ TransactWriteItems: 2 });
    expect(written.every((r) => r?.newOccurrence)).toBe(true);
    expect((await store.get(large[19]!.alert.fingerprint, T0))?.alert.annotations.runbook).toHaveLength(200_000);
  });

  it('keeps single writes where the endpoint has no TransactWriteItems (a plain dynalite), asking it once', async () => {
    const server = dynalite({ createTableMs: 0 });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const client = new DynamoDBClient({ endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, region: 'local', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
    try {
      await ensureTable(client, 'plain');
      const plainCounts = countCommands(client);
      const store = new DynamoDbAlertRecordStore(client, { tableName: 'plain', ttlSeconds: 3600 });
      const list = (): NotifiedAlert[] => Array.from({ length: 3 }, () => ({ alert: alertOf(), groupKey: 'g', externalURL: 'http://am', channels: ['sns'] }));
      expect(await store.recordManyNotified!(list(), T0, { items: [] })).toEqual([null, null, null]);
      expect(await store.recordManyNotified!(list(), T0, { items: [] })).toEqual([null, null, null]);
      expect(Object.fromEntries(plainCounts)).toEqual({ TransactWriteItems: 1 });
    } finally {
      client.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('sends each alert of a group that two HA peers post at once exactly once per channel, and records each once per peer', async () => {
    const alerts = Array.from({ length: 30 }, () => alertOf());
    const message = group(alerts);
    const [a, b] = [pipeline(), pipeline()];
    await Promise.all([processGroup(message, a), processGroup(message, b)]);
    const sent = (p: ReturnType<typeof pipeline>) => p.channels.flatMap((c) => c.received.flatMap((m) => m.alerts.map((x) => `${c.name} ${x.fingerprint}`)));
    expect([...sent(a), ...sent(b)].sort()).toEqual(CHANNELS.flatMap((c) => alerts.map((x) => `${c} ${x.fingerprint}`)).sort());
    const store = records();
    for (const x of alerts) expect((await store.get(x.fingerprint, T0 + 5000))?.channels).toEqual([...CHANNELS].sort());
    for (const e of await histories(store, alerts)) expect(e).toEqual([['notified', S1, [...CHANNELS].sort()]]);
  });
  it('records each alert once when one transaction of a group fails for another reason (throttling after the retries): the others stand', async () => {
    const store = records();
    let transactions = 0;
    const name = 'testThrottleSecondTransaction';
    db.client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'TransactWriteItemsCommand' && ++transactions === 2)
          throw Object.assign(new Error('Rate of requests exceeds the allowed throughput.'), { name: 'ThrottlingException', $fault: 'client' });
        return next(args);
      },
      { step: 'initialize', name },
    );
    const alerts = Array.from({ length: 150 }, () => alertOf());
    try {
      // Before: the failed chunk failed the whole call, and the 100 records already written were written again (two `notified` each).
      const cost = await requests(() => processGroup(group(alerts), pipeline(store)));
      expect(cost).toMatchObject({ TransactWriteItems: 2, UpdateItem: 50 });
    } finally {
      db.client.middlewareStack.remove(name);
    }
    expect(await histories(store, alerts)).toEqual(alerts.map(() => [['notified', S1, [...CHANNELS].sort()]]));
  });

  it('writes what a batch leaves alone (a storm of resolves) at most 64 at a time', async () => {
    const deps = pipeline();
    const alerts = Array.from({ length: 200 }, () => alertOf());
    await processGroup(group(alerts), deps);
    let inFlight = 0;
    let most = 0;
    const name = 'testUpdatesInFlight';
    db.client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName !== 'UpdateItemCommand') return next(args);
        most = Math.max(most, ++inFlight);
        try {
          return await next(args);
        } finally {
          inFlight--;
        }
      },
      { step: 'initialize', name },
    );
    try {
      const resolved = alerts.map((a) => ({ ...a, status: 'resolved' as const, endsAt: '2026-11-29T12:30:00.000Z' }));
      await processGroup(group(resolved), deps);
    } finally {
      db.client.middlewareStack.remove(name);
    }
    // Before: all 200 at once (resolves never go in a transaction).
    expect(most).toBeGreaterThan(1);
    expect(most).toBeLessThanOrEqual(64);
  });

  it('does not try a transaction for a known alert whose record the group read found: its new occurrence goes straight to the single write', async () => {
    const deps = pipeline();
    const known = Array.from({ length: 3 }, () => alertOf());
    await processGroup(group(known), deps);
    const fresh = Array.from({ length: 4 }, () => alertOf());
    // The known alerts fire again (a new occurrence, a new startsAt) in a group with four new ones.
    const cost = await requests(() => processGroup(group([...known.map((a) => ({ ...a, startsAt: S2 })), ...fresh]), deps));
    // Before: a transaction of all seven, cancelled by the three known records, then one of the four.
    expect(cost.TransactWriteItems).toBe(1);
    const store = records();
    for (const e of await histories(store, known))
      expect(e).toEqual([
        ['notified', S1, [...CHANNELS].sort()],
        ['notified', S2, [...CHANNELS].sort()],
      ]);
    for (const e of await histories(store, fresh)) expect(e).toEqual([['notified', S1, [...CHANNELS].sort()]]);
  });
});
