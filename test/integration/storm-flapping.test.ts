/**
 * Flapping: the flap record on dynalite (one conditional write per firing, idempotent for a
 * repair), and through the app an alert that resolves and fires again within the window is sent
 * marked FLAPPING instead of as a fresh page.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApp } from '../../shared/http/app.js';
import type { Channel } from '../../shared/channels/channel.js';
import { DynamoDbDedupeStore } from '../../shared/store/dedupe-dynamodb.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import { ensureTable } from '../../shared/store/table.js';
import { silentLogger } from '../../shared/core/logger.js';
import type { Notification } from '../../shared/render/notification.js';
import { fixture } from '../helpers/fixtures.js';

const WINDOW = 30 * 60_000;
const T0 = Date.parse('2026-11-29T12:00:00Z');
const MIN = 60_000;

let db: LocalDynamoDb;
beforeAll(async () => {
  db = await startLocalDynamoDb('flapping-test');
});
afterAll(() => db.close());

describe('DynamoDbDedupeStore.noteFiring on dynalite', () => {
  const store = () => new DynamoDbDedupeStore(db.client, { tableName: db.tableName, ttlSeconds: 3600 });
  let n = 0;
  const fp = () => `flap-${++n}`;

  it('counts firings each within the window of the previous one, and starts over after a quiet window', async () => {
    const s = store();
    const f = fp();
    expect(await s.noteFiring(f, T0, WINDOW, T0)).toEqual({ count: 1, sinceMs: T0 });
    expect(await s.noteFiring(f, T0 + 10 * MIN, WINDOW, T0 + 10 * MIN)).toEqual({ count: 2, sinceMs: T0 });
    expect(await s.noteFiring(f, T0 + 35 * MIN, WINDOW, T0 + 35 * MIN)).toEqual({ count: 3, sinceMs: T0 });
    // Quiet for longer than the window: a new run.
    expect(await s.noteFiring(f, T0 + 70 * MIN, WINDOW, T0 + 70 * MIN)).toEqual({ count: 1, sinceMs: T0 + 70 * MIN });
  });

  it('answers the same run for the same firing again (a repair or a retry)', async () => {
    const s = store();
    const f = fp();
    await s.noteFiring(f, T0, WINDOW, T0);
    const second = await s.noteFiring(f, T0 + 5 * MIN, WINDOW, T0 + 5 * MIN);
    expect(await s.noteFiring(f, T0 + 5 * MIN, WINDOW, T0 + 6 * MIN)).toEqual(second);
    expect(await s.noteFiring(f, T0, WINDOW, T0 + 6 * MIN)).toEqual({ count: 1, sinceMs: T0 });
    // Neither changed the record: the next firing continues the run.
    expect(await s.noteFiring(f, T0 + 9 * MIN, WINDOW, T0 + 9 * MIN)).toEqual({ count: 3, sinceMs: T0 });
  });

  it('lets one of two concurrent notes of the same firing count it', async () => {
    const s = store();
    const f = fp();
    await s.noteFiring(f, T0, WINDOW, T0);
    const runs = await Promise.all([s.noteFiring(f, T0 + MIN, WINDOW, T0 + MIN), s.noteFiring(f, T0 + MIN, WINDOW, T0 + MIN)]);
    expect(runs).toEqual([{ count: 2, sinceMs: T0 }, { count: 2, sinceMs: T0 }]);
  });
});

class Recorder implements Channel {
  readonly name = 'slack';
  received: Notification[] = [];
  async send(n: Notification) {
    this.received.push(n);
  }
}

describe('flapping through the app', () => {
  let slack: Recorder;
  let app: ReturnType<typeof createApp>;
  let tables = 0;
  beforeEach(async () => {
    const tableName = `flapping-app-${++tables}`;
    await ensureTable(db.client, tableName);
    slack = new Recorder();
    app = createApp(
      { allowUnauthenticated: true },
      {
        store: new DynamoDbDedupeStore(db.client, { tableName, ttlSeconds: 3600 }),
        channels: [slack],
        enrich: async (alerts) => new Map(alerts.map((a) => [a.fingerprint, { status: 'unavailable', kind: 'kv_cache', reason: 'test' }] as const)),
        delivery: { timeoutMs: 1000, retries: 0 },
        logger: silentLogger,
        now: () => Date.now(),
      },
    );
  });

  /** The KV-cache fixture as one state of a flapping alert: firing from `startsAt`, or resolved at `endsAt`. */
  const state = (startsAt: string, endsAt?: string) => {
    const body = fixture('firing-kv-cache-critical');
    body.alerts[0]!.startsAt = startsAt;
    if (endsAt) {
      body.status = 'resolved';
      body.alerts[0]!.status = 'resolved';
      body.alerts[0]!.endsAt = endsAt;
    }
    return app.request('/v1/alertmanager', { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
  };

  it('marks an alert that fires again within 30 minutes, and not one that fires again hours later', async () => {
    await state('2026-11-29T12:00:00Z');
    await state('2026-11-29T12:00:00Z', '2026-11-29T12:04:00Z');
    await state('2026-11-29T12:07:00Z');
    await state('2026-11-29T12:07:00Z', '2026-11-29T12:09:00Z');
    await state('2026-11-29T12:12:00Z');
    await state('2026-11-29T12:12:00Z', '2026-11-29T12:15:00Z');
    await state('2026-11-29T16:00:00Z');
    const marks = slack.received.map((n) => (n.status === 'resolved' ? 'resolved' : (n.flapping?.[n.alerts[0]!.fingerprint]?.count ?? 1)));
    expect(marks).toEqual([1, 'resolved', 2, 'resolved', 3, 'resolved', 1]);
    expect(slack.received[4]!.flapping).toEqual({ [slack.received[4]!.alerts[0]!.fingerprint]: { count: 3, sinceMs: Date.parse('2026-11-29T12:00:00Z') } });
  });

  it('keeps the mark when Alertmanager sends the flapping firing again (no second message)', async () => {
    await state('2026-11-29T12:00:00Z');
    await state('2026-11-29T12:05:00Z');
    await state('2026-11-29T12:05:00Z');
    expect(slack.received).toHaveLength(2);
    expect(Object.values(slack.received[1]!.flapping ?? {})).toEqual([{ count: 2, sinceMs: Date.parse('2026-11-29T12:00:00Z') }]);
  });
});
