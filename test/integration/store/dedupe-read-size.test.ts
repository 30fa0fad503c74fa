/**
 * What a duplicate's dedupe read carries (a duplicate should cost one small read). The
 * batched read takes the head and the alert record of each alert; of the record it needs only the
 * delivery mark and the flap run, not the stored alert and enrichment that make most of its size.
 * Checked on dynalite through the real stores: the attributes of the BatchGetItem answer as the SDK
 * received them, and that the duplicate and the flap run still read right from them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Alert } from '../../../shared/alertmanager/schema.js';
import type { Enrichment } from '../../../shared/enrich/types.js';
import { alertStores } from '../../../shared/store/alert-stores.js';
import { runOf } from '../../../shared/store/seen.js';
import { DynamoDbDedupeStore } from '../../../shared/store/dedupe-dynamodb.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../../shared/store/local-dynamodb.js';

const T0 = Date.parse('2026-11-29T12:00:00Z');
const STARTS_AT = '2026-11-29T12:00:00.000Z';
let db: LocalDynamoDb;
/** The attribute names of every item each BatchGetItem answer held. */
const answered: string[][] = [];

beforeAll(async () => {
  db = await startLocalDynamoDb('dedupe-read-size-test');
  db.client.middlewareStack.add(
    (next, context) => async (args) => {
      const out = await next(args);
      if (context.commandName === 'BatchGetItemCommand') {
        const items = Object.values(
          (out.output as { Responses?: Record<string, Record<string, unknown>[]> }).Responses ?? {},
        ).flat();
        answered.push(...items.map((item) => Object.keys(item).sort()));
      }
      return out;
    },
    { step: 'initialize', name: 'testBatchGetAnswers' },
  );
});
afterAll(async () => db.close());

const alertOf = (fingerprint: string): Alert => ({
  status: 'firing',
  labels: { alertname: 'KvCacheHigh', severity: 'critical', model: 'llama-3-70b' },
  annotations: { summary: 'x'.repeat(2000) },
  startsAt: STARTS_AT,
  endsAt: '0001-01-01T00:00:00Z',
  generatorURL: '',
  fingerprint,
});
const enrichment = {
  status: 'ok',
  signals: [{ name: 'kv', query: `avg(vllm:gpu_cache_usage_perc{model="llama"})${' '.repeat(3000)}` }],
} as unknown as Enrichment;

describe('dedupe read of a duplicate', () => {
  it('reads only the head and the delivery mark and flap run of the record, not the stored alert and enrichment', async () => {
    const dedupe = new DynamoDbDedupeStore(db.client, { tableName: db.tableName, ttlSeconds: 3600 });
    const { records } = alertStores(db.client, { tableName: db.tableName, ttlSeconds: 3600 });
    const a = alertOf('size-1');
    const claim = await dedupe.claim(a, ['slack'], T0);
    await records.recordNotified(
      {
        alert: a,
        enrichment,
        groupKey: 'g',
        externalURL: 'http://am',
        channels: ['slack'],
        generation: 0,
        deliveredEvent: claim.event.key,
        flapRun: { count: 2, sinceMs: T0 - 60_000 },
      },
      T0 + 10,
    );

    answered.length = 0;
    const [seen] = await dedupe.readMany([a], T0 + 20);
    expect((await dedupe.claim(a, ['slack'], T0 + 20, seen)).decision).toBe('already notified');
    expect(runOf(a, seen!, 600_000, T0 + 20)).toEqual({ count: 2, sinceMs: T0 - 60_000 });
    const read = new Set(answered.flat());
    expect(read.has('pk') && read.has('deliveredEvent') && read.has('startsAt')).toBe(true);
    expect([...read].filter((name) => /json|alert|enrichment|groupKey|externalURL/i.test(name))).toEqual([]);
  });
});
