/**
 * Flapping through the app, on dynalite: an alert that resolves and fires again within the window is
 * sent marked FLAPPING instead of as a fresh page (its run counted from the alert record read with the
 * claim, `shared/store/seen.ts`).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApp } from '../../shared/http/app.js';
import type { Channel } from '../../shared/channels/channel.js';
import { testDeps } from '../helpers/pipeline-deps.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import { ensureTable } from '../../shared/store/table.js';
import type { Notification } from '../../shared/render/notification.js';
import { fixture } from '../helpers/fixtures.js';

let db: LocalDynamoDb;
beforeAll(async () => {
  db = await startLocalDynamoDb('flapping-test');
});
afterAll(() => db.close());

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
      testDeps({
        table: { client: db.client, tableName },
        channels: [slack],
        enrich: async (alerts) =>
          new Map(
            alerts.map((a) => [a.fingerprint, { status: 'unavailable', kind: 'kv_cache', reason: 'test' }] as const),
          ),
      }),
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
    return app.request('/v1/alertmanager', {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
    });
  };

  it('marks an alert that fires again within 30 minutes, and not one that fires again hours later', async () => {
    await state('2026-11-29T12:00:00Z');
    await state('2026-11-29T12:00:00Z', '2026-11-29T12:04:00Z');
    await state('2026-11-29T12:07:00Z');
    await state('2026-11-29T12:07:00Z', '2026-11-29T12:09:00Z');
    await state('2026-11-29T12:12:00Z');
    await state('2026-11-29T12:12:00Z', '2026-11-29T12:15:00Z');
    await state('2026-11-29T16:00:00Z');
    const marks = slack.received.map((n) =>
      n.status === 'resolved' ? 'resolved' : (n.flapping?.[n.alerts[0]!.fingerprint]?.count ?? 1),
    );
    expect(marks).toEqual([1, 'resolved', 2, 'resolved', 3, 'resolved', 1]);
    expect(slack.received[4]!.flapping).toEqual({
      [slack.received[4]!.alerts[0]!.fingerprint]: { count: 3, sinceMs: Date.parse('2026-11-29T12:00:00Z') },
    });
  });

  it('keeps the mark when Alertmanager sends the flapping firing again (no second message)', async () => {
    await state('2026-11-29T12:00:00Z');
    await state('2026-11-29T12:05:00Z');
    await state('2026-11-29T12:05:00Z');
    expect(slack.received).toHaveLength(2);
    expect(Object.values(slack.received[1]!.flapping ?? {})).toEqual([
      { count: 2, sinceMs: Date.parse('2026-11-29T12:00:00Z') },
    ]);
  });
});
