/**
 * The delivery mark (`shared/store/delivery-mark.ts`): the alert record's write after delivery also
 * stands for the dedupe ledger's. Checked on dynalite through the real stores and pipeline: what a
 * mark means to the next claim, what items written by the previous version (no mark; the head's own
 * ledger) still mean, the fallback to the head when the record write fails, and the store requests a
 * group costs (counted at the SDK's middleware; counts, not timings).
 */
import { GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AckLinks } from '../../../shared/ack/links.js';
import { verifyAckToken } from '../../../shared/ack/token.js';
import { AckTracker } from '../../../shared/ack/tracker.js';
import type { Alert, WebhookMessage } from '../../../shared/alertmanager/schema.js';
import type { Channel } from '../../../shared/channels/channel.js';
import type { Notification } from '../../../shared/render/notification.js';
import { silentLogger } from '../../../shared/core/logger.js';
import { Secret } from '../../../shared/core/secret.js';
import type { Enrichment } from '../../../shared/enrich/types.js';
import { processGroup, type PipelineDeps } from '../../../shared/pipeline/index.js';
import { alertStores } from '../../../shared/store/alert-stores.js';
import { DynamoDbAlertSetStore } from '../../../shared/store/alert-set.js';
import type { AlertRecordStore } from '../../../shared/store/alert-record.js';
import { DynamoDbDedupeStore } from '../../../shared/store/dedupe-dynamodb.js';
import type { AlertEvent, Claim } from '../../../shared/store/dedupe.js';
import { eventKey } from '../../../shared/store/keys.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../../shared/store/local-dynamodb.js';
import { countCommands } from '../../helpers/count-commands.js';
import { testDeps } from '../../helpers/pipeline-deps.js';
import { webhookGroup } from '../../helpers/webhook.js';

const T0 = Date.parse('2026-11-29T12:00:00Z');
const STARTS_AT = '2026-11-29T12:00:00.000Z';
const ZERO = '0001-01-01T00:00:00Z';
const LEASE_MS = 60_000;
let db: LocalDynamoDb;
let n = 0;
let counts = new Map<string, number>();

beforeAll(async () => {
  db = await startLocalDynamoDb('delivery-mark-test');
  counts = countCommands(db.client);
});
afterAll(async () => db.close());

const dedupe = () =>
  new DynamoDbDedupeStore(db.client, { tableName: db.tableName, ttlSeconds: 3600, leaseMs: LEASE_MS });
const stores = () => alertStores(db.client, { tableName: db.tableName, ttlSeconds: 3600 });
const records = () => stores().records;
const alertOf = (fingerprint = `mark-${++n}`, over: Partial<Alert> = {}): Alert => ({
  status: 'firing',
  labels: { alertname: 'KvCacheHigh', severity: 'critical' },
  annotations: {},
  startsAt: STARTS_AT,
  endsAt: ZERO,
  generatorURL: '',
  fingerprint,
  ...over,
});
const resolvedOf = (a: Alert): Alert => ({ ...a, status: 'resolved', endsAt: '2026-11-29T12:06:00.000Z' });
const decision = (c: Claim) => ({ decision: c.decision, pending: c.pending });
/** The record write after delivery, with the delivery mark of `claim` when `mark`. */
const recordOf = (a: Alert, claim: Claim, channels: string[], nowMs: number, mark = true) =>
  records().recordNotified(
    {
      alert: a,
      groupKey: 'g',
      externalURL: 'http://am',
      channels,
      generation: claim.event.generation,
      ...(mark && { deliveredEvent: claim.event.key }),
    },
    nowMs,
  );
const headOf = async (a: AlertEvent) =>
  (
    await db.client.send(
      new GetItemCommand({
        TableName: db.tableName,
        Key: { pk: { S: eventKey({ ...a, status: 'firing' }) } },
        ConsistentRead: true,
      }),
    )
  ).Item;
const readClaim = async (a: Alert, channels: string[], nowMs: number) => {
  const s = dedupe();
  const [seen] = await s.readMany([a], nowMs);
  return s.claim(a, channels, nowMs, seen);
};

describe('delivery mark: the record write stands for the ledger write', () => {
  it('reads a head whose event the record marks delivered as already notified (no ledger write)', async () => {
    const a = alertOf();
    const claim = await dedupe().claim(a, ['slack', 'sns'], T0);
    await recordOf(a, claim, ['slack', 'sns'], T0 + 10);
    // The head still lists its channels: the mark alone says they have it.
    expect((await headOf(a))?.pending?.SS?.sort()).toEqual(['slack', 'sns']);
    expect(decision(await readClaim(a, ['slack', 'sns'], T0 + 20))).toEqual({
      decision: 'already notified',
      pending: [],
    });
    expect(decision(await dedupe().claim(a, ['slack', 'sns'], T0 + 20))).toEqual({
      decision: 'already notified',
      pending: [],
    });
  });

  it('claims the resolve of a marked firing at once, not "in flight" until the lease ends; one of two concurrent resolves wins', async () => {
    const a = alertOf();
    const claim = await dedupe().claim(a, ['slack'], T0);
    await recordOf(a, claim, ['slack'], T0 + 10);
    const [seen] = await dedupe().readMany([resolvedOf(a)], T0 + 20);
    const both = await Promise.all([
      dedupe().claim(resolvedOf(a), ['slack'], T0 + 20, seen),
      dedupe().claim(resolvedOf(a), ['slack'], T0 + 20),
    ]);
    expect(both.map((c) => c.decision).sort()).toEqual(['first notification', 'in flight']);
  });

  it('keeps a head without a mark in flight while its lease holds (a record written without it, or none)', async () => {
    const a = alertOf();
    const claim = await dedupe().claim(a, ['slack'], T0);
    await recordOf(a, claim, ['slack'], T0 + 10, false);
    expect(decision(await readClaim(a, ['slack'], T0 + 20))).toEqual({ decision: 'in flight', pending: [] });
    expect(decision(await readClaim(resolvedOf(a), ['slack'], T0 + 20))).toEqual({
      decision: 'in flight',
      pending: [],
    });
    expect(decision(await readClaim(a, ['slack'], T0 + LEASE_MS + 1))).toEqual({
      decision: 'repair',
      pending: ['slack'],
    });
  });

  it('reads items in the previous version’s shape as before: the head’s own ledger, a record without a mark', async () => {
    const fp = `old-${++n}`;
    const a = alertOf(fp);
    const sec = T0 / 1000;
    // As the previous version left them: the head's ledger written by markDelivered, the record with no `deliveredEvent`.
    await db.client.send(
      new PutItemCommand({
        TableName: db.tableName,
        Item: {
          pk: { S: `event#${fp}#${STARTS_AT}#firing` },
          state: { S: 'firing' },
          generation: { N: '0' },
          delivered: { SS: ['slack'] },
          leaseUntil: { N: String(T0 + LEASE_MS) },
          claimedAt: { N: String(T0) },
          expiresAt: { N: String(sec + 3600) },
        },
      }),
    );
    await db.client.send(
      new PutItemCommand({
        TableName: db.tableName,
        Item: {
          pk: { S: `alert#${fp}` },
          fingerprint: { S: fp },
          startsAt: { S: STARTS_AT },
          status: { S: 'firing' },
          alertJson: { S: JSON.stringify(a) },
          groupKey: { S: 'g' },
          externalURL: { S: 'http://am' },
          channels: { SS: ['slack'] },
          notifiedAt: { S: STARTS_AT },
          historySeq: { N: '1' },
          expiresAt: { N: String(sec + 3600) },
        },
      }),
    );
    expect(decision(await readClaim(a, ['slack'], T0 + 20))).toEqual({ decision: 'already notified', pending: [] });
    expect(decision(await readClaim(resolvedOf(a), ['slack'], T0 + 20))).toEqual({
      decision: 'first notification',
      pending: ['slack'],
    });
    expect((await records().get(fp, T0 + 30))?.status).toBe('firing');
  });

  it('takes a record of a later occurrence to mean the earlier one is over: a lagging copy is not repaired to every channel', async () => {
    const a = alertOf();
    const claim = await dedupe().claim(a, ['slack'], T0);
    await recordOf(a, claim, ['slack'], T0 + 10);
    // The next occurrence (a new `startsAt`), announced after the first one's lease ran out.
    const later = { ...a, startsAt: '2026-11-29T12:01:00.000Z' };
    const laterClaim = await dedupe().claim(later, ['slack'], T0 + 100_000);
    await recordOf(later, laterClaim, ['slack'], T0 + 100_010);
    expect(decision(await readClaim(a, ['slack'], T0 + 100_020))).toEqual({
      decision: 'already notified',
      pending: [],
    });
  });

  it('confirms a re-fire after a marked resolve, and marks the re-fire by its generation', async () => {
    const a = alertOf();
    const s = dedupe();
    const firing = await s.claim(a, ['slack'], T0);
    await recordOf(a, firing, ['slack'], T0 + 10);
    const resolve = await readClaim(resolvedOf(a), ['slack'], T0 + 20);
    await recordOf(resolvedOf(a), resolve, ['slack'], T0 + 30);
    const candidate = await readClaim(a, ['slack'], T0 + 40);
    expect(candidate.decision).toBe('resolved before');
    const refire = await s.confirm(a, candidate, ['slack'], T0 + 40);
    expect(decision(refire)).toEqual({ decision: 'firing again', pending: ['slack'] });
    await recordOf(a, refire, ['slack'], T0 + 50);
    expect(decision(await readClaim(a, ['slack'], T0 + 60))).toMatchObject({ decision: 'already notified' });
  });
});

class Accepting implements Channel {
  received: Notification[] = [];
  constructor(readonly name: string) {}
  async send(n: Notification): Promise<void> {
    this.received.push(n);
  }
}

function pipeline(recordStore: AlertRecordStore = records(), now = () => T0 + 1000, flapWindowMs = 0): PipelineDeps {
  const alertState = { ...stores(), records: recordStore };
  return testDeps({
    store: dedupe(),
    alerts: alertState,
    channels: [new Accepting('slack'), new Accepting('feishu'), new Accepting('sns')],
    enrich: async (alerts) =>
      new Map<string, Enrichment>(
        alerts.map((a) => [a.fingerprint, { status: 'unavailable', kind: 'kv_cache', reason: 'test' }]),
      ),
    delivery: { timeoutMs: 2000, retries: 0 },
    flapWindowMs,
    now,
    ack: new AckTracker({ stores: alertState, logger: silentLogger, now }),
  });
}

const group = (alerts: Alert[]): WebhookMessage => webhookGroup(alerts, `{}:{n="${++n}"}`);

/** Store requests by command while `run` runs. */
async function requests(run: () => Promise<unknown>): Promise<Record<string, number>> {
  counts.clear();
  await run();
  return Object.fromEntries(counts);
}

describe('store requests per group (3 channels, acknowledgement records)', () => {
  it('costs a new alert its claim and one write after delivery; a duplicate only the batched read', async () => {
    const deps = pipeline();
    const one = group([alertOf()]);
    // Before the mark: a ledger UpdateItem and a record UpdateItem per alert; before the notified event rode in the record, a BatchWriteItem of history.
    expect(await requests(() => processGroup(one, deps))).toEqual({ BatchGetItem: 1, PutItem: 1, UpdateItem: 1 });
    expect(await requests(() => processGroup(one, deps))).toEqual({ BatchGetItem: 1 });
    const forty = group(Array.from({ length: 40 }, () => alertOf()));
    // 80 keys (head and record; no legacy resolve item): one BatchGetItem; 40 claims; the 40 record writes, each
    // with its history event inside.
    expect(await requests(() => processGroup(forty, deps))).toEqual({ BatchGetItem: 1, PutItem: 40, UpdateItem: 40 });
    expect(await requests(() => processGroup(forty, deps))).toEqual({ BatchGetItem: 1 });
  });

  it('stores a storm digest’s alert set once for the group, not once per channel: every channel’s link names the same set', async () => {
    const keys = { current: new Secret('delivery-mark-test-secret-0123456789') };
    const links = new AckLinks(
      { publicUrl: 'https://alerts.example', keys, ttlSeconds: 3600 },
      new DynamoDbAlertSetStore(db.client, { tableName: db.tableName }),
    );
    const deps = {
      ...pipeline(),
      ack: new AckTracker({ stores: stores(), links, logger: silentLogger, now: () => T0 + 1000 }),
    };
    const sixty = group(Array.from({ length: 60 }, () => alertOf()));
    // 60 claims and one alert set (three before: one per channel's digest); 60 heads read, not the records of
    // more new alerts than flapping is counted for (one BatchGetItem, two before: 120 keys).
    expect(await requests(() => processGroup(sixty, deps))).toEqual({ BatchGetItem: 1, PutItem: 61, UpdateItem: 60 });
    // The repeat: the heads, then the records of the live ones (their delivery mark).
    expect(await requests(() => processGroup(sixty, deps))).toEqual({ BatchGetItem: 2 });
    const sets = deps.channels.map((c) =>
      verifyAckToken((c as Accepting).received[0]!.acknowledgeUrl!.split('/').pop()!, keys, T0 + 1000),
    );
    expect(new Set(sets.map((t) => t.set?.id)).size).toBe(1);
    expect(sets.map((t) => [t.channel, t.set?.alerts])).toEqual([
      ['slack', 60],
      ['feishu', 60],
      ['sns', 60],
    ]);
  });

  it('writes the head’s ledger when the record write fails, so the delivery is still known', async () => {
    const store = records();
    const recordNotified: AlertRecordStore['recordNotified'] = (...args) =>
      args[0].deliveredEvent
        ? Promise.reject(Object.assign(new Error('throttled (test)'), { name: 'ThrottlingException' }))
        : store.recordNotified(...args);
    const failing: AlertRecordStore = {
      get: store.get.bind(store),
      getMany: store.getMany.bind(store),
      addChannels: store.addChannels.bind(store),
      recordNotified,
    };
    const a = alertOf();
    await processGroup(group([a]), pipeline(failing));
    expect((await headOf(a))?.pending).toBeUndefined();
    expect((await headOf(a))?.delivered?.SS?.sort()).toEqual(['feishu', 'slack', 'sns']);
    expect((await store.get(a.fingerprint, T0 + 2000))?.channels).toEqual(['feishu', 'slack', 'sns']);
    expect(decision(await readClaim(a, ['slack', 'feishu', 'sns'], T0 + 2000))).toEqual({
      decision: 'already notified',
      pending: [],
    });
  });

  it('counts flapping from the alert record read with the claims: no flap item, no request of its own', async () => {
    const MIN = 60_000;
    let clock = T0;
    const deps = pipeline(records(), () => clock, 30 * MIN);
    const fp = `flapping-${++n}`;
    const fire = (startsAt: string) => group([alertOf(fp, { startsAt })]);
    const resolve = (startsAt: string, endsAt: string) =>
      group([{ ...alertOf(fp, { startsAt }), status: 'resolved', endsAt }]);
    const steps: [number, WebhookMessage][] = [
      [0, fire('2026-11-29T12:00:00.000Z')],
      [4, resolve('2026-11-29T12:00:00.000Z', '2026-11-29T12:04:00.000Z')],
      [7, fire('2026-11-29T12:07:00.000Z')],
      [8, fire('2026-11-29T12:07:00.000Z')],
      [9, resolve('2026-11-29T12:07:00.000Z', '2026-11-29T12:09:00.000Z')],
      [12, fire('2026-11-29T12:12:00.000Z')],
      [15, resolve('2026-11-29T12:12:00.000Z', '2026-11-29T12:15:00.000Z')],
      [240, fire('2026-11-29T16:00:00.000Z')],
    ];
    const cost: Record<string, number>[] = [];
    for (const [minute, message] of steps) {
      clock = T0 + minute * MIN;
      cost.push(await requests(() => processGroup(message, deps)));
    }
    const slack = deps.channels[0] as Accepting;
    const marks = slack.received.map((m) => (m.status === 'resolved' ? 'resolved' : (m.flapping?.[fp]?.count ?? 1)));
    expect(marks).toEqual([1, 'resolved', 2, 'resolved', 3, 'resolved', 1]);
    expect(slack.received[4]!.flapping).toEqual({ [fp]: { count: 3, sinceMs: Date.parse('2026-11-29T12:00:00Z') } });
    // A new firing: read, claim, its record's write, and the history item of the event the record held (the first
    // firing's, which that write displaces); the resend (step 4) only the read.
    expect(cost[2]).toEqual({ BatchGetItem: 1, PutItem: 1, UpdateItem: 1, BatchWriteItem: 1 });
    expect(cost[3]).toEqual({ BatchGetItem: 1 });
    const flapItem = await db.client.send(
      new GetItemCommand({ TableName: db.tableName, Key: { pk: { S: `flap#${fp}` } } }),
    );
    expect(flapItem.Item).toBeUndefined();
  });

  it('reads a record without a run (written by the previous version) as a run of one', async () => {
    const MIN = 60_000;
    const fp = `old-run-${++n}`;
    const sec = T0 / 1000;
    await db.client.send(
      new PutItemCommand({
        TableName: db.tableName,
        Item: {
          pk: { S: `alert#${fp}` },
          fingerprint: { S: fp },
          startsAt: { S: STARTS_AT },
          status: { S: 'resolved' },
          alertJson: { S: JSON.stringify(alertOf(fp)) },
          groupKey: { S: 'g' },
          externalURL: { S: 'http://am' },
          channels: { SS: ['slack'] },
          notifiedAt: { S: STARTS_AT },
          historySeq: { N: '2' },
          expiresAt: { N: String(sec + 3600) },
        },
      }),
    );
    const deps = pipeline(records(), () => T0 + 10 * MIN, 30 * MIN);
    await processGroup(group([alertOf(fp, { startsAt: '2026-11-29T12:08:00.000Z' })]), deps);
    expect((deps.channels[0] as Accepting).received[0]!.flapping).toEqual({ [fp]: { count: 2, sinceMs: T0 } });
  });
});
