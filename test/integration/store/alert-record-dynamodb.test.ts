/**
 * The alert-state store on dynalite through the real AWS SDK: occurrences, once-only acknowledgement,
 * silence ids, the escalation state machine and the history the audit route reads.
 */
import pLimit from 'p-limit';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { alertStores } from '../../../shared/store/alert-stores.js';
import type { AlertStores } from '../../../shared/store/alert-record.js';
import type { HistoryBatch, NotifiedAlert } from '../../../shared/store/alert-record.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../../shared/store/local-dynamodb.js';
import { ensureTable } from '../../../shared/store/table.js';
import { fixture } from '../../helpers/fixtures.js';

const T0 = Date.parse('2026-11-29T12:45:00Z');
const STARTS = '2026-11-29T12:42:23.143Z';
let db: LocalDynamoDb;
let stores: AlertStores;
let n = 0;

beforeAll(async () => {
  db = await startLocalDynamoDb('ack-store-0');
});
afterAll(async () => db.close());
beforeEach(async () => {
  const tableName = `ack-store-${++n}`;
  await ensureTable(db.client, tableName);
  stores = alertStores(db.client, { tableName, ttlSeconds: 3600 });
});

function notified(overrides: Partial<NotifiedAlert['alert']> = {}, channels = ['slack', 'sns']): NotifiedAlert {
  const message = fixture('firing-kv-cache-critical');
  return {
    alert: { ...message.alerts[0]!, ...overrides },
    enrichment: {
      status: 'enriched',
      kind: 'kv_cache',
      signals: [{ name: 'x', label: 'TTFT p95', value: Number.NaN, unit: 'seconds', query: 'q' }],
    },
    groupKey: message.groupKey,
    externalURL: message.externalURL,
    channels,
  };
}
/** Runs `write(i)` for i = 0 … n-1, a few at a time (each alert's writes are its own). */
async function each(n: number, write: (i: number) => Promise<unknown>): Promise<void> {
  const limit = pLimit(8);
  await Promise.all(Array.from({ length: n }, (_, i) => limit(() => write(i))));
}
const ack = (by: string, at = T0 + 1000) => ({ by, at: new Date(at).toISOString(), channel: 'slack' });
/** A link covering occurrences started and re-fired by `ms`. */
const cover = (ms: number) => ({ startsAtMs: ms, refiredAtMs: ms });

describe('the alert stores on DynamoDB (records, history, acknowledgements, escalations)', () => {
  it('records an occurrence once, adds channels to it, and keeps NaN signal values', async () => {
    const first = await stores.records.recordNotified(notified({}, ['slack']), T0);
    expect(first).toMatchObject({
      newOccurrence: true,
      record: { status: 'firing', startsAt: STARTS, channels: ['slack'] },
    });
    const again = await stores.records.recordNotified(notified({}, ['sns']), T0 + 10);
    expect(again).toMatchObject({ newOccurrence: false, record: { channels: ['slack', 'sns'] } });
    const record = await stores.records.get('936e109b8c52c001', T0);
    expect(record?.enrichment?.status === 'enriched' && record.enrichment.signals[0]!.value).toBeNaN();
    expect(record?.alert.labels.alertname).toBe('VLLMKVCacheNearlyFull');
  });

  it('acknowledges once: the second caller gets the first acknowledgement', async () => {
    await stores.records.recordNotified(notified(), T0);
    const [a, b] = await Promise.all([
      stores.acknowledgements.acknowledge('936e109b8c52c001', ack('alice'), cover(T0), T0 + 1),
      stores.acknowledgements.acknowledge('936e109b8c52c001', ack('bob'), cover(T0), T0 + 1),
    ]);
    const outcomes = [a.outcome, b.outcome].sort();
    expect(outcomes).toEqual(['acknowledged', 'already acknowledged']);
    const winner = a.outcome === 'acknowledged' ? 'alice' : 'bob';
    const third = await stores.acknowledgements.acknowledge('936e109b8c52c001', ack('carol'), cover(T0), T0 + 2);
    expect(third).toMatchObject({ outcome: 'already acknowledged', record: { acknowledgement: { by: winner } } });
  });

  it('refuses unknown alerts, resolved ones and occurrences newer than the link', async () => {
    expect(await stores.acknowledgements.acknowledge('nope', ack('alice'), cover(T0), T0)).toEqual({
      outcome: 'unknown',
    });
    await stores.records.recordNotified(notified({ startsAt: '2026-11-29T13:00:00Z' }), T0);
    expect(
      (
        await stores.acknowledgements.acknowledge(
          '936e109b8c52c001',
          ack('alice'),
          cover(Date.parse('2026-11-29T12:59:00Z')),
          T0,
        )
      ).outcome,
    ).toBe('newer occurrence');
    await stores.records.recordNotified(
      notified({ startsAt: '2026-11-29T13:00:00Z', status: 'resolved', endsAt: '2026-11-29T13:05:00Z' }),
      T0,
    );
    expect(
      (await stores.acknowledgements.acknowledge('936e109b8c52c001', ack('alice'), cover(T0 + 3600_000), T0)).outcome,
    ).toBe('resolved');
  });

  it('resolves the same occurrence, keeping its acknowledgement; a new occurrence clears it', async () => {
    await stores.records.recordNotified(notified(), T0);
    await stores.acknowledgements.acknowledge('936e109b8c52c001', ack('alice'), cover(T0), T0 + 1);
    await stores.acknowledgements.setSilence(
      '936e109b8c52c001',
      STARTS,
      { id: 'silence-1', endsAt: '2026-11-29T13:42:23.143Z' },
      T0 + 2,
    );
    const resolved = await stores.records.recordNotified(
      notified({ status: 'resolved', endsAt: '2026-11-29T13:00:00Z' }),
      T0 + 60_000,
    );
    expect(resolved).toMatchObject({
      newOccurrence: false,
      record: { status: 'resolved', acknowledgement: { by: 'alice', silenceId: 'silence-1' } },
    });
    // A late firing repair of the same occurrence never un-resolves it.
    expect((await stores.records.recordNotified(notified(), T0 + 61_000))?.record.status).toBe('resolved');
    const next = await stores.records.recordNotified(notified({ startsAt: '2026-11-29T14:00:00Z' }), T0 + 3_600_000);
    expect(next?.newOccurrence).toBe(true);
    expect(next?.record.acknowledgement).toBeUndefined();
    expect(await stores.records.recordNotified(notified(), T0 + 3_600_001)).toBeUndefined();
  });

  it('runs escalation scheduled → sent once, releases on failure, and cancels only while scheduled', async () => {
    await stores.records.recordNotified(notified(), T0);
    expect(await stores.escalations.schedule('936e109b8c52c001', STARTS, T0 + 900_000, T0)).toBe(true);
    expect(await stores.escalations.schedule('936e109b8c52c001', STARTS, T0 + 900_000, T0)).toBe(false);
    const [x, y] = await Promise.all([
      stores.escalations.claim('936e109b8c52c001', STARTS, T0 + 1),
      stores.escalations.claim('936e109b8c52c001', STARTS, T0 + 1),
    ]);
    expect([x, y].filter(Boolean)).toHaveLength(1);
    expect(await stores.escalations.cancel('936e109b8c52c001', STARTS, 'acknowledged', T0 + 2)).toBe(false);
    await stores.escalations.release('936e109b8c52c001', STARTS);
    expect(await stores.escalations.cancel('936e109b8c52c001', STARTS, 'acknowledged', T0 + 3)).toBe(true);
    expect(await stores.escalations.claim('936e109b8c52c001', STARTS, T0 + 4)).toBeUndefined();
    expect((await stores.records.get('936e109b8c52c001', T0))?.escalation).toMatchObject({
      state: 'cancelled',
      reason: 'acknowledged',
    });
  });

  it('lists the escalations still scheduled, leaving out sent, cancelled and expired ones', async () => {
    const fp = (i: number) => `f${String(i).padStart(15, '0')}`;
    for (let i = 0; i < 6; i++) {
      await stores.records.recordNotified(
        notified({ fingerprint: fp(i), labels: { alertname: 'A', n: String(i) } }),
        T0,
      );
      await stores.escalations.schedule(fp(i), STARTS, T0 + i * 1000, T0);
    }
    await stores.escalations.claim(fp(1), STARTS, T0);
    await stores.escalations.cancel(fp(2), STARTS, 'silenced', T0);
    await stores.records.recordNotified(notified({ fingerprint: fp(9), labels: { alertname: 'A', n: '9' } }), T0);
    const listed = await stores.escalations.scheduled(T0);
    expect(listed.sort((a, b) => a.dueAtMs - b.dueAtMs)).toEqual(
      [0, 3, 4, 5].map((i) => ({ fingerprint: fp(i), startsAt: STARTS, dueAtMs: T0 + i * 1000 })),
    );
    // Records past their TTL (an hour here) are absent, as everywhere in the store.
    expect(await stores.escalations.scheduled(T0 + 3_600_000)).toEqual([]);
  });

  it('does not claim the escalation of an acknowledged alert', async () => {
    await stores.records.recordNotified(notified(), T0);
    await stores.escalations.schedule('936e109b8c52c001', STARTS, T0 + 900_000, T0);
    await stores.acknowledgements.acknowledge('936e109b8c52c001', ack('alice'), cover(T0), T0 + 1);
    expect(await stores.escalations.claim('936e109b8c52c001', STARTS, T0 + 2)).toBeUndefined();
  });

  it('keeps history in order, returns the last N, and records nothing for unknown alerts', async () => {
    await stores.history.add('936e109b8c52c001', { type: 'escalated', target: 'x', startsAt: STARTS }, T0);
    expect(await stores.history.last('936e109b8c52c001', 10, T0)).toEqual([]);
    await stores.records.recordNotified(notified(), T0);
    for (let i = 0; i < 5; i++)
      await stores.history.add(
        '936e109b8c52c001',
        { type: 'notified', status: 'firing', channels: [`c${i}`], startsAt: STARTS },
        T0 + i,
      );
    const last3 = await stores.history.last('936e109b8c52c001', 3, T0);
    expect(last3.map((e) => (e.type === 'notified' ? e.channels[0] : ''))).toEqual(['c2', 'c3', 'c4']);
    expect(last3[0]).toEqual({
      at: new Date(T0 + 2).toISOString(),
      type: 'notified',
      status: 'firing',
      channels: ['c2'],
      startsAt: STARTS,
    });
  });

  it('reads many records in batches, leaving out unknown ones', async () => {
    await each(120, (i) => stores.records.recordNotified({ ...notified({ fingerprint: `fp${i}` }) }, T0));
    const many = await stores.records.getMany(['nope', ...Array.from({ length: 120 }, (_, i) => `fp${i}`), 'fp0'], T0);
    expect(many.size).toBe(120);
    expect(many.get('fp119')?.alert.fingerprint).toBe('fp119');
    expect((await stores.history.last('fp7', 10, T0)).map((e) => e.type)).toEqual(['notified']);
  });

  it('writes a batch of history events in batch requests, in sequence order whatever the write order', async () => {
    const channelsOf = async (fp: string) =>
      (await stores.history.last(fp, 10, T0)).map((e) => (e.type === 'notified' ? e.channels : []));
    // A new occurrence's event rides in its record: no history item.
    await each(60, (i) =>
      stores.records.recordNotified(notified({ fingerprint: `batch${i}` }, ['slack']), T0, { items: [] }),
    );
    const batch: HistoryBatch = { items: [] };
    // Another channel of each (the same occurrence: a history item each), and a later occurrence of one, whose
    // write moves the first firing's event (held in the record until then) to its history item.
    await each(60, (i) =>
      stores.records.recordNotified(notified({ fingerprint: `batch${i}` }, ['sns']), T0 + 1, batch),
    );
    await stores.records.recordNotified(
      notified({ fingerprint: 'batch0', startsAt: '2026-11-29T13:00:00Z' }, ['feishu']),
      T0 + 2,
      batch,
    );
    expect(await channelsOf('batch0')).toEqual([['feishu']]);
    expect(batch.items).toHaveLength(61);
    await stores.history.flush(batch);
    expect(batch.items).toHaveLength(0);
    expect(await channelsOf('batch59')).toEqual([['slack'], ['sns']]);
    expect(await channelsOf('batch0')).toEqual([['slack'], ['sns'], ['feishu']]);
  });

  it('treats expired records as absent', async () => {
    await stores.records.recordNotified(notified(), T0);
    expect(await stores.records.get('936e109b8c52c001', T0 + 3_600_001)).toBeUndefined();
    expect(await stores.records.recordNotified(notified(), T0 + 3_600_001)).toMatchObject({ newOccurrence: true });
  });

  it('a later occurrence starts at generation 0, so its own re-fire is recorded firing again (was left resolved when an earlier occurrence had re-fired)', async () => {
    const LATER = '2026-11-29T13:10:00.000Z';
    const at = (overrides: Partial<NotifiedAlert['alert']>, generation?: number): NotifiedAlert => ({
      ...notified(overrides),
      ...(generation && { generation }),
    });
    const resolved = { status: 'resolved' as const, endsAt: '2026-11-29T12:50:00Z' };
    await stores.records.recordNotified(at({}), T0);
    await stores.records.recordNotified(at(resolved), T0 + 1);
    expect((await stores.records.recordNotified(at({}, 1), T0 + 2))?.record).toMatchObject({
      status: 'firing',
      generation: 1,
    });
    await stores.records.recordNotified(at(resolved, 1), T0 + 3);
    // A new occurrence (a later startsAt) of the same fingerprint: generation 0 again.
    const fresh = await stores.records.recordNotified(at({ startsAt: LATER }), T0 + 4);
    expect(fresh).toMatchObject({ newOccurrence: true, record: { status: 'firing', startsAt: LATER } });
    expect(fresh?.record.generation).toBeUndefined();
    await stores.records.recordNotified(at({ startsAt: LATER, ...resolved, endsAt: '2026-11-29T13:20:00Z' }), T0 + 5);
    const refired = await stores.records.recordNotified(at({ startsAt: LATER }, 1), T0 + 6);
    expect(refired?.record).toMatchObject({ status: 'firing', startsAt: LATER, generation: 1 });
    expect(refired?.record.resolvedAt).toBeUndefined();
  });
});
