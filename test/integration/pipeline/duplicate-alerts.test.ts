/**
 * One alert twice in one webhook payload (a sender that repeats an alert; alerts without a `fingerprint`
 * whose labels are equal; a firing and a resolved copy of one alert): each alert is processed once, in
 * its newest state, and the group is answered 2xx. Checked on dynalite through the real store and
 * pipeline.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Alert, WebhookMessage } from '../../../shared/alertmanager/schema.js';
import type { Channel } from '../../../shared/channels/channel.js';
import type { Notification } from '../../../shared/render/notification.js';
import type { Enrichment } from '../../../shared/enrich/types.js';
import { processGroup, type PipelineDeps } from '../../../shared/pipeline/index.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../../shared/store/local-dynamodb.js';
import { testDeps } from '../../helpers/pipeline-deps.js';
import { webhookGroup } from '../../helpers/webhook.js';

const T0 = Date.parse('2026-11-29T12:00:00Z');
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

function pipeline(channel: Recording): PipelineDeps {
  return testDeps({
    table: db,
    channels: [channel],
    enrich: async (alerts) =>
      new Map<string, Enrichment>(
        alerts.map((a) => [a.fingerprint, { status: 'unavailable', kind: 'kv_cache', reason: 'test' }]),
      ),
    flapWindowMs: 0,
    now: () => T0 + 1000,
  });
}

const group = (alerts: Alert[]): WebhookMessage => webhookGroup(alerts, `{}:{g="${++n}"}`);

describe('one alert event twice in a payload', () => {
  it('each alert is sent once, the group is not refused, and the resend is all duplicates', async () => {
    const channel = new Recording('slack');
    const deps = pipeline(channel);
    const [a, b, c, d] = [alertOf(), alertOf(), alertOf(), alertOf()];
    const message = group([a, b, c, { ...c }, d, { ...a }]);
    const first = await processGroup(message, deps);
    expect(first).toMatchObject({ received: 6, notified: 4 });
    expect(channel.sent.sort()).toEqual([a, b, c, d].map((x) => x.fingerprint).sort());
    // Alertmanager's retry (the copy may have read as in flight): nothing sent again.
    const again = await processGroup(message, deps);
    expect(again).toMatchObject({ received: 6, notified: 0, duplicates: 4, ok: true });
    expect(channel.sent).toHaveLength(4);
  });

  it('a copy far from its original (30 alerts apart) is not sent a second time', async () => {
    const channel = new Recording('slack');
    const deps = pipeline(channel);
    const alerts = Array.from({ length: 30 }, alertOf);
    const message = group([...alerts, { ...alerts[0]! }]);
    expect(await processGroup(message, deps)).toMatchObject({ received: 31, notified: 30 });
    expect(channel.sent.sort()).toEqual(alerts.map((x) => x.fingerprint).sort());
  });

  const resolvedOf = (a: Alert): Alert => ({ ...a, status: 'resolved', endsAt: '2026-11-29T12:00:30.000Z' });

  it.each([
    ['firing, then its resolve', (a: Alert) => [a, resolvedOf(a)]],
    ['its resolve, then firing', (a: Alert) => [resolvedOf(a), a]],
  ])('%s: the resolve alone is processed, and the group is not left in flight', async (_, payload) => {
    const channel = new Recording('slack');
    const deps = pipeline(channel);
    const a = alertOf();
    const sent: string[] = [];
    channel.send = async (notification) => {
      sent.push(...notification.alerts.map((x) => `${x.fingerprint} ${x.status}`));
    };
    const result = await processGroup(group(payload(a)), deps);
    expect(result).toMatchObject({ received: 2, inFlight: 0, ok: true });
    expect(sent.every((s) => s === `${a.fingerprint} resolved`)).toBe(true);
  });

  it('of two occurrences (two startsAt), the newer one is processed', async () => {
    const channel = new Recording('slack');
    const deps = pipeline(channel);
    const a = alertOf();
    const later = { ...a, startsAt: '2026-11-29T12:00:20.000Z', annotations: { summary: 'later' } };
    const shown: string[] = [];
    channel.send = async (notification) => {
      shown.push(...notification.alerts.map((x) => x.startsAt));
    };
    expect(await processGroup(group([later, a]), deps)).toMatchObject({ received: 2, notified: 1, ok: true });
    expect(shown).toEqual([later.startsAt]);
  });
});

describe('dedupe decisions counted', () => {
  it('once per decision and group, not once per alert (each increment is a log line in Lambda)', async () => {
    const incs: [string, Record<string, string>, number | undefined][] = [];
    const metrics = {
      inc: (n: string, l: Record<string, string>, v?: number) => incs.push([n, l, v]),
      observe() {},
      set() {},
    };
    const channel = new Recording('slack');
    const deps = { ...pipeline(channel), metrics };
    const alerts = Array.from({ length: 5 }, alertOf);
    await processGroup(group(alerts), deps);
    await processGroup(group([...alerts, alertOf()]), deps);
    expect(incs.filter(([n]) => n === 'dedupe_decisions_total')).toEqual([
      ['dedupe_decisions_total', { decision: 'first notification' }, 5],
      ['dedupe_decisions_total', { decision: 'already notified' }, 5],
      ['dedupe_decisions_total', { decision: 'first notification' }, 1],
    ]);
  });
});
