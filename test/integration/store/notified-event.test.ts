/**
 * A record write's `notified` event inside the record (`notifiedEventJson`, `notifiedEventSeq`): a new
 * alert's record costs one request, and the event it displaces goes to its own history item. Checked on
 * dynalite through the real SDK: the requests, and that the history reads every event exactly once and in
 * order across fire → resolve → re-fire → acknowledgement → new occurrences, with HA peers and an
 * acknowledgement racing the record write (counts, not timings).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Alert } from '../../../shared/alertmanager/schema.js';
import { alertStores } from '../../../shared/store/alert-stores.js';
import type { AlertStores, HistoryBatch, HistoryEvent, NotifiedAlert } from '../../../shared/store/alert-record.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../../shared/store/local-dynamodb.js';
import { countCommands } from '../../helpers/count-commands.js';

const T0 = Date.parse('2026-11-29T12:00:00Z');
const S1 = '2026-11-29T12:00:00.000Z';
const S2 = '2026-11-29T13:00:00.000Z';
const S3 = '2026-11-29T14:00:00.000Z';
let db: LocalDynamoDb;
let n = 0;
let counts = new Map<string, number>();

beforeAll(async () => {
  db = await startLocalDynamoDb('notified-event-test');
  counts = countCommands(db.client);
});
afterAll(async () => db.close());

const records = () => alertStores(db.client, { tableName: db.tableName, ttlSeconds: 3600 });
const alertOf = (fingerprint: string, over: Partial<Alert> = {}): Alert => ({
  status: 'firing',
  labels: { alertname: 'KvCacheHigh', severity: 'critical' },
  annotations: {},
  startsAt: S1,
  endsAt: '0001-01-01T00:00:00Z',
  generatorURL: '',
  fingerprint,
  ...over,
});
const resolvedOf = (a: Alert): Alert => ({
  ...a,
  status: 'resolved',
  endsAt: new Date(Date.parse(a.startsAt) + 300_000).toISOString(),
});
const notified = (alert: Alert, channels = ['slack', 'sns'], over: Partial<NotifiedAlert> = {}): NotifiedAlert => ({
  alert,
  groupKey: 'g',
  externalURL: 'http://am',
  channels,
  ...over,
});

/** One record write as the pipeline makes it: into a group's history batch, flushed at the group's end. */
async function write(store: AlertStores, n: NotifiedAlert, nowMs: number) {
  const batch: HistoryBatch = { items: [] };
  const written = await store.records.recordNotified(n, nowMs, batch);
  await store.history.flush(batch);
  return written;
}

/** An acknowledgement as `shared/ack/acknowledge.ts` makes it: the record's conditional write, then its history event. */
async function acknowledge(store: AlertStores, fingerprint: string, by: string, nowMs: number) {
  const at = new Date(nowMs).toISOString();
  const outcome = await store.acknowledgements.acknowledge(
    fingerprint,
    { by, at, channel: 'slack' },
    { startsAtMs: nowMs, refiredAtMs: nowMs },
    nowMs,
  );
  if (outcome.outcome === 'acknowledged')
    await store.history.add(
      fingerprint,
      { type: 'acknowledged', by, channel: 'slack', startsAt: outcome.record.startsAt },
      nowMs,
    );
  return outcome.outcome;
}

const brief = (e: HistoryEvent) =>
  [
    e.type,
    e.startsAt,
    'status' in e ? e.status : 'by' in e ? e.by : '',
    'generation' in e ? (e.generation ?? 0) : 0,
  ].join(' ');

describe("the notified event in the record's own write", () => {
  it('records a new alert with one request, its record write: no history item, the event read back from the record', async () => {
    const store = records();
    const fp = `new-${++n}`;
    const batch: HistoryBatch = { items: [] };
    counts.clear();
    const written = await store.records.recordNotified(
      notified(alertOf(fp), ['slack', 'sns'], { deliveredEvent: 'k' }),
      T0,
      batch,
    );
    await store.history.flush(batch);
    // Before: the record's UpdateItem, then its history item (a BatchWriteItem at the group's end).
    expect(Object.fromEntries(counts)).toEqual({ UpdateItem: 1 });
    expect(await store.history.last(fp, 10, T0)).toEqual([
      { at: new Date(T0).toISOString(), type: 'notified', status: 'firing', channels: ['slack', 'sns'], startsAt: S1 },
    ]);
    // The record the write returns (escalation reads it) is the record stored (the ack page reads that).
    expect(written).toMatchObject({ newOccurrence: true });
    expect(written?.record).toEqual(await store.records.get(fp, T0));
  });

  it('reads every event once and in order across fire → resolve → re-fire → acknowledgement → later occurrences', async () => {
    const store = records();
    const fp = `life-${++n}`;
    const a = alertOf(fp);
    const seen: string[] = [];
    const check = async (expected: string) => {
      seen.push(expected);
      expect((await store.history.last(fp, 20, T0 + 100)).map(brief)).toEqual(seen);
    };
    await write(store, notified(a), T0);
    await check(`notified ${S1} firing 0`);
    await write(store, notified(resolvedOf(a)), T0 + 1);
    await check(`notified ${S1} resolved 0`);
    await write(store, notified(a, ['slack', 'sns'], { generation: 1 }), T0 + 2);
    await check(`notified ${S1} firing 1`);
    expect(await acknowledge(store, fp, 'ann', T0 + 3)).toBe('acknowledged');
    await check(`acknowledged ${S1} ann 0`);
    await write(store, notified(resolvedOf(a), ['slack', 'sns'], { generation: 1 }), T0 + 4);
    await check(`notified ${S1} resolved 1`);
    const second = alertOf(fp, { startsAt: S2 });
    const fresh = await write(store, notified(second), T0 + 5);
    expect(fresh?.record).toEqual(await store.records.get(fp, T0 + 5));
    expect(fresh?.record.acknowledgement).toBeUndefined();
    await check(`notified ${S2} firing 0`);
    await write(store, notified(second, ['feishu']), T0 + 6);
    await check(`notified ${S2} firing 0`);
    await write(store, notified(alertOf(fp, { startsAt: S3 })), T0 + 7);
    await check(`notified ${S3} firing 0`);
    expect((await store.history.last(fp, 3, T0 + 100)).map(brief)).toEqual(seen.slice(-3));
  });

  it('keeps every event of HA peers writing the same alerts at once, each once', async () => {
    const [peerA, peerB] = [records(), records()];
    const fps = Array.from({ length: 8 }, () => `peers-${++n}`);
    await Promise.all(fps.map((fp) => write(peerA, notified(alertOf(fp)), T0)));
    // Both peers record the next occurrence (one starts it, the other adds its channel), then both its resolve.
    await Promise.all(
      fps.flatMap((fp) => [
        write(peerA, notified(alertOf(fp, { startsAt: S2 }), ['slack']), T0 + 1),
        write(peerB, notified(alertOf(fp, { startsAt: S2 }), ['sns']), T0 + 1),
      ]),
    );
    await Promise.all(
      fps.flatMap((fp) => [
        write(peerA, notified(resolvedOf(alertOf(fp, { startsAt: S2 })), ['slack']), T0 + 2),
        write(peerB, notified(resolvedOf(alertOf(fp, { startsAt: S2 })), ['sns']), T0 + 2),
      ]),
    );
    for (const fp of fps) {
      const events = await peerA.history.last(fp, 20, T0 + 3);
      expect(events.map((e) => [e.type, e.startsAt, 'status' in e && e.status])).toEqual([
        ['notified', S1, 'firing'],
        ['notified', S2, 'firing'],
        ['notified', S2, 'firing'],
        ['notified', S2, 'resolved'],
        ['notified', S2, 'resolved'],
      ]);
      expect(
        events
          .slice(1, 3)
          .flatMap((e) => (e.type === 'notified' ? e.channels : []))
          .sort(),
      ).toEqual(['slack', 'sns']);
      expect((await peerA.records.get(fp, T0 + 3))?.channels).toEqual(['slack', 'sns']);
    }
  });

  it('keeps an acknowledgement that races the record write of a later occurrence, and the events of both', async () => {
    const store = records();
    const fps = Array.from({ length: 8 }, () => `ack-race-${++n}`);
    await Promise.all(fps.map((fp) => write(store, notified(alertOf(fp)), T0)));
    const outcomes = await Promise.all(
      fps.map(
        async (fp) =>
          (
            await Promise.all([
              acknowledge(store, fp, 'ann', T0 + 1),
              write(records(), notified(alertOf(fp, { startsAt: S2 })), T0 + 1),
            ])
          )[0],
      ),
    );
    for (const [i, fp] of fps.entries()) {
      const events = (await store.history.last(fp, 20, T0 + 2)).map(brief);
      const record = await store.records.get(fp, T0 + 2);
      expect(record?.startsAt).toBe(S2);
      if (outcomes[i] === 'acknowledged') {
        // The acknowledgement came first (it was of the first occurrence): the later one is not acknowledged.
        // In the order the store took them: the history event of the acknowledgement may follow the later record's write.
        expect(events[0]).toBe(`notified ${S1} firing 0`);
        expect(events.slice(1).sort()).toEqual([`acknowledged ${S1} ann 0`, `notified ${S2} firing 0`]);
        expect(record?.acknowledgement).toBeUndefined();
      } else {
        expect(outcomes[i]).toBe('newer occurrence');
        expect(events).toEqual([`notified ${S1} firing 0`, `notified ${S2} firing 0`]);
      }
    }
  });
});
