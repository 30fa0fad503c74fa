/**
 * Enrichment started while the claims are written (`shared/pipeline/enrich.ts`): a new group's
 * Prometheus work overlaps its claim round, and a claim lost to a racing post still sends and records
 * nothing for that alert. On dynalite through the real stores and pipeline.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Alert, WebhookMessage } from '../../../shared/alertmanager/schema.js';
import type { Channel } from '../../../shared/channels/channel.js';
import type { Enrichment } from '../../../shared/enrich/types.js';
import { processGroup, type PipelineDeps } from '../../../shared/pipeline/index.js';
import type { Notification } from '../../../shared/render/notification.js';
import { alertStores } from '../../../shared/store/alert-stores.js';
import type { AlertStores } from '../../../shared/store/alert-record.js';
import type { DedupeStore } from '../../../shared/store/dedupe.js';
import { DynamoDbDedupeStore } from '../../../shared/store/dedupe-dynamodb.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../../shared/store/local-dynamodb.js';
import { testDeps } from '../../helpers/pipeline-deps.js';
import { webhookGroup } from '../../helpers/webhook.js';

const T0 = Date.parse('2026-12-01T08:00:00Z');
const TTL_SECONDS = 3600;
let db: LocalDynamoDb;
let n = 0;

beforeAll(async () => {
  db = await startLocalDynamoDb('early-enrich-test');
});
afterAll(async () => db.close());

const alertOf = (): Alert => ({
  status: 'firing',
  labels: { alertname: 'KvCacheHigh', severity: 'warning', n: String(++n) },
  annotations: {},
  startsAt: '2026-12-01T07:59:00.000Z',
  endsAt: '0001-01-01T00:00:00Z',
  generatorURL: '',
  fingerprint: `early-${n}`,
});

const group = (alerts: Alert[]): WebhookMessage => webhookGroup(alerts, `{}:{g="${++n}"}`);

/** Accepts everything; keeps each alert sent with the enrichment reason it carried. */
class Recording implements Channel {
  readonly sent: { fingerprint: string; reason: string }[] = [];
  constructor(readonly name: string) {}
  async send(notification: Notification): Promise<void> {
    for (const a of notification.alerts)
      this.sent.push({
        fingerprint: a.fingerprint,
        reason: a.enrichment.status === 'unavailable' ? a.enrichment.reason : '',
      });
  }
}

interface Probe {
  deps: PipelineDeps;
  records: AlertStores;
  /** The fingerprints of each enrich call, in order. */
  enriched: string[][];
  /** Enrich calls already made when each claim was asked, in order. */
  enrichedAtClaim: number[];
}

/**
 * The real stores, with hooks: `afterRead` runs when the batched read has its answer (before it is
 * returned), `beforeClaim` before each single claim is written.
 */
function probe(
  channel: Recording,
  hooks: { afterRead?: () => Promise<void>; beforeClaim?: () => Promise<void> } = {},
): Probe {
  const now = () => T0 + 1000;
  const real = new DynamoDbDedupeStore(db.client, { tableName: db.tableName, ttlSeconds: TTL_SECONDS });
  const records = alertStores(db.client, { tableName: db.tableName, ttlSeconds: TTL_SECONDS });
  const enriched: string[][] = [];
  const enrichedAtClaim: number[] = [];
  // The real store with two methods wrapped.
  const store: DedupeStore = {
    readMany: async (...args) => {
      const seen = await real.readMany(...args);
      await hooks.afterRead?.();
      return seen;
    },
    claim: async (...args) => {
      enrichedAtClaim.push(enriched.length);
      await hooks.beforeClaim?.();
      return real.claim(...args);
    },
    confirm: real.confirm.bind(real),
    markDelivered: real.markDelivered.bind(real),
    release: real.release.bind(real),
  };
  const deps = testDeps({
    store,
    alerts: records,
    channels: [channel],
    enrich: async (alerts) => {
      enriched.push(alerts.map((a) => a.fingerprint));
      return new Map<string, Enrichment>(
        alerts.map((a) => [
          a.fingerprint,
          { status: 'unavailable', kind: 'kv_cache', reason: `call ${enriched.length}` },
        ]),
      );
    },
    delivery: { timeoutMs: 2000, retries: 0 },
    flapWindowMs: 0,
    now,
  });
  return { deps, records, enriched, enrichedAtClaim };
}

/** A barrier for `parties` callers: each waits until all have arrived. */
function barrier(parties: number): () => Promise<void> {
  let arrived = 0;
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return () => {
    if (++arrived === parties) open();
    return opened;
  };
}

const notifiedEvents = async (p: Probe, fingerprint: string) =>
  (await p.records.history.last(fingerprint, 20, T0 + 2000)).filter((e) => e.type === 'notified');

describe('enrichment started while the claim is written', () => {
  it('a new alert is enriched once, before its claim is written, and sent with that enrichment', async () => {
    const channel = new Recording('slack');
    const p = probe(channel);
    const alert = alertOf();
    expect(await processGroup(group([alert]), p.deps)).toMatchObject({ notified: 1, ok: true });
    expect(p.enrichedAtClaim).toEqual([1]);
    expect(p.enriched).toEqual([[alert.fingerprint]]);
    expect(channel.sent).toEqual([{ fingerprint: alert.fingerprint, reason: 'call 1' }]);
    // A duplicate: nothing read as new, nothing enriched.
    expect(await processGroup(group([alert]), p.deps)).toMatchObject({ notified: 0, duplicates: 1 });
    expect(p.enriched).toHaveLength(1);
  });

  it.each([1, 4])(
    'two posts of a new group of %i that both read it as new: each alert is sent and recorded once',
    async (size) => {
      const channel = new Recording('slack');
      const bothRead = barrier(2);
      const [p1, p2] = [probe(channel, { afterRead: bothRead }), probe(channel, { afterRead: bothRead })];
      const alerts = Array.from({ length: size }, alertOf);
      const results = await Promise.all([processGroup(group(alerts), p1.deps), processGroup(group(alerts), p2.deps)]);
      // Both started enrichment from their read; the claims gave each alert to one of them.
      expect(p1.enriched[0]).toEqual(alerts.map((a) => a.fingerprint));
      expect(p2.enriched[0]).toEqual(alerts.map((a) => a.fingerprint));
      expect(channel.sent.map((s) => s.fingerprint).sort()).toEqual(alerts.map((a) => a.fingerprint).sort());
      expect(results[0]!.notified + results[1]!.notified).toBe(size);
      for (const a of alerts) expect(await notifiedEvents(p1, a.fingerprint)).toHaveLength(1);
    },
  );

  it('an alert whose claim another post won is dropped from the early enrichment, and not sent again', async () => {
    const channel = new Recording('slack');
    const [a, b] = [alertOf(), alertOf()];
    let firstDone!: () => void;
    const done = new Promise<void>((resolve) => (firstDone = resolve));
    let read!: () => void;
    const readDone = new Promise<void>((resolve) => (read = resolve));
    // The second post reads a and b as new, then waits to claim until the first post has sent b.
    const second = probe(channel, { afterRead: async () => read(), beforeClaim: () => done });
    const pending = processGroup(group([a, b]), second.deps);
    await readDone;
    const first = probe(channel);
    expect(await processGroup(group([b]), first.deps)).toMatchObject({ notified: 1 });
    firstDone();
    expect(await pending).toMatchObject({ notified: 1, duplicates: 1, ok: true });
    // Early: a and b; then only a, whose message carries the second enrichment.
    expect(second.enriched).toEqual([[a.fingerprint, b.fingerprint], [a.fingerprint]]);
    expect(channel.sent).toEqual([
      { fingerprint: b.fingerprint, reason: 'call 1' },
      { fingerprint: a.fingerprint, reason: 'call 2' },
    ]);
    expect(await notifiedEvents(first, b.fingerprint)).toHaveLength(1);
  });
});
