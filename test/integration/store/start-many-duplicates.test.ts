/**
 * One alert event twice in one webhook payload (a sender that repeats an alert; alerts without a
 * `fingerprint` whose labels are equal): the batched claims of the embedded store
 * (`shared/store/start-many.ts`) must treat the copy as a single conditional claim would, not send
 * DynamoDB a batch with one key twice (refused: `ValidationException`, a 503 to every retry, the
 * whole group never delivered). Checked on dynalite through the real store and pipeline, against the
 * same group on a shared table (single conditional claims).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Alert, WebhookMessage } from '../../../shared/alertmanager/schema.js';
import type { Channel } from '../../../shared/channels/channel.js';
import type { Notification } from '../../../shared/render/notification.js';
import { silentLogger } from '../../../shared/core/logger.js';
import type { Enrichment } from '../../../shared/enrich/types.js';
import { AckTracker } from '../../../shared/ack/tracker.js';
import { processGroup, type PipelineDeps } from '../../../shared/pipeline/index.js';
import { DynamoDbAlertRecordStore } from '../../../shared/store/alert-record-dynamodb.js';
import { DynamoDbDedupeStore } from '../../../shared/store/dedupe-dynamodb.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../../shared/store/local-dynamodb.js';
import { webhookGroup } from '../../helpers/webhook.js';

const T0 = Date.parse('2026-11-29T12:00:00Z');
const TTL_SECONDS = 3600;
let db: LocalDynamoDb;
let n = 0;

beforeAll(async () => {
  db = await startLocalDynamoDb('start-many-duplicates-test');
});
afterAll(async () => db.close());

const alertOf = (): Alert => ({
  status: 'firing',
  labels: { alertname: 'KvCacheHigh', severity: 'critical', n: String(++n) },
  annotations: {},
  startsAt: '2026-11-29T12:00:00.000Z',
  endsAt: '0001-01-01T00:00:00Z',
  generatorURL: '',
  fingerprint: `dup-${n}`,
});

/** A channel that accepts everything and keeps the fingerprints it was sent. */
class Recording implements Channel {
  readonly sent: string[] = [];
  constructor(readonly name: string) {}
  async send(notification: Notification): Promise<void> {
    this.sent.push(...notification.alerts.map((a) => a.fingerprint));
  }
}

function pipeline(exclusive: boolean, channel: Recording): PipelineDeps {
  const now = () => T0 + 1000;
  const records = new DynamoDbAlertRecordStore(db.client, { tableName: db.tableName, ttlSeconds: TTL_SECONDS, exclusive });
  return {
    ack: new AckTracker({ store: records, logger: silentLogger, now }),
    store: new DynamoDbDedupeStore(db.client, { tableName: db.tableName, ttlSeconds: TTL_SECONDS, exclusive }),
    channels: [channel],
    enrich: async (alerts) => new Map<string, Enrichment>(alerts.map((a) => [a.fingerprint, { status: 'unavailable', kind: 'kv_cache', reason: 'test' }])),
    delivery: { timeoutMs: 2000, retries: 0 },
    flapWindowMs: 0,
    logger: silentLogger,
    now,
  };
}

const group = (alerts: Alert[]): WebhookMessage => webhookGroup(alerts, `{}:{g="${++n}"}`);

describe('one alert event twice in a payload', () => {
  it.each([
    ['exclusive (embedded store, batched claims)', true],
    ['shared (single conditional claims)', false],
  ])('%s: each alert is sent once, the group is not refused, and the resend is all duplicates', async (_name, exclusive) => {
    const channel = new Recording('slack');
    const deps = pipeline(exclusive, channel);
    const [a, b, c, d] = [alertOf(), alertOf(), alertOf(), alertOf()];
    const message = group([a, b, c, { ...c }, d, { ...a }]);
    const first = await processGroup(message, deps);
    expect(first).toMatchObject({ received: 6, notified: 4 });
    expect(channel.sent.sort()).toEqual([a, b, c, d].map((x) => x.fingerprint).sort());
    // Alertmanager's retry (the copy may have read as in flight): nothing sent again.
    const again = await processGroup(message, deps);
    expect(again).toMatchObject({ received: 6, notified: 0, duplicates: 6, ok: true });
    expect(channel.sent).toHaveLength(4);
  });

  it.each([
    ['exclusive (embedded store, batched claims)', true],
    ['shared (single conditional claims)', false],
  ])('%s: a copy far from its original (another write batch of 25) is not sent a second time', async (_name, exclusive) => {
    const channel = new Recording('slack');
    const deps = pipeline(exclusive, channel);
    const alerts = Array.from({ length: 30 }, alertOf);
    const message = group([...alerts, { ...alerts[0]! }]);
    expect(await processGroup(message, deps)).toMatchObject({ received: 31, notified: 30 });
    expect(channel.sent.sort()).toEqual(alerts.map((x) => x.fingerprint).sort());
  });
});
