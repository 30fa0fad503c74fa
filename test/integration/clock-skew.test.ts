/**
 * Clock skew between the sender (Prometheus or Grafana stamping `startsAt`, Alertmanager stamping
 * `endsAt`) and us: wherever a sender's time meets ours, a realistic skew either way changes nothing.
 * - A link acknowledges the firing it was sent for even when its `startsAt` is minutes (or hours) ahead
 *   of our clock: the page offers the form and the POST acknowledges.
 * - A link never acknowledges a later occurrence, even when the sender's clock is behind ours (its
 *   new `startsAt` then reads earlier than the link's issue time on our clock).
 * - Alertmanager's alert-state answer: an alert it lists is firing, even when its `endsAt` (Alertmanager's
 *   clock) is a little behind ours.
 * Real app, pipeline, ack runtime and dynalite; a settable clock.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alertmanagerAlertState } from '../../shared/alert-state/alertmanager.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import { fixture } from '../helpers/fixtures.js';
import { startLoopback } from '../helpers/loopback.js';
import { ackHarness, ackPath, FormClient } from './ack-harness.js';

const MINUTE = 60_000;
let db: LocalDynamoDb;
beforeAll(async () => {
  db = await startLocalDynamoDb('clock-skew');
});
afterAll(async () => db.close());

/** The KV-cache fixture firing with `startsAt` at `offsetMs` from the harness's clock (the sender's clock is off by it). */
function firingAt(nowMs: number, offsetMs: number) {
  const body = fixture('firing-kv-cache-critical');
  body.alerts[0]!.startsAt = new Date(nowMs + offsetMs).toISOString();
  return body;
}

/** The KV-cache fixture resolved: the occurrence that started at `startsAt`, ended at `endsAtMs` (epoch ms). */
function resolvedAt(startsAt: string, endsAtMs: number) {
  const body = fixture('firing-kv-cache-critical');
  body.status = 'resolved';
  Object.assign(body.alerts[0]!, { status: 'resolved', startsAt, endsAt: new Date(endsAtMs).toISOString() });
  return body;
}

describe("a link and the sender's clock", () => {
  it.each([
    ['4 minutes', 4 * MINUTE],
    ['2 hours', 120 * MINUTE],
  ])('acknowledges a firing whose startsAt is %s ahead of our clock: the page offers the form', async (_, ahead) => {
    const h = await ackHarness(db);
    expect((await h.webhook(firingAt(h.now(), ahead))).status).toBe(200);
    const path = ackPath(h.channels[0]!.received[0]);
    const client = new FormClient(h.app);
    const page = await (await client.open(path)).text();
    expect(page).toContain('<form');
    const done = await (await client.submit(path, { name: 'alice' })).text();
    expect(done.replace(/<[^>]+>/g, ' '), done.replace(/<[^>]+>/g, ' ')).toMatch(/Acknowledged by\s+alice/);
  });

  it("does not acknowledge a later occurrence when the sender's clock is 4 minutes behind ours", async () => {
    const h = await ackHarness(db);
    const behind = -4 * MINUTE;
    const first = firingAt(h.now(), behind);
    expect((await h.webhook(first)).status).toBe(200);
    const path = ackPath(h.channels[0]!.received[0]);
    const stale = new FormClient(h.app);
    expect(await (await stale.open(path)).text()).toContain('<form');
    // It resolves, and a minute later fires anew: a new startsAt, still before the link's issue time on our clock.
    h.advance(MINUTE);
    const resolved = resolvedAt(first.alerts[0]!.startsAt, h.now() + behind);
    expect((await h.webhook(resolved)).status).toBe(200);
    h.advance(MINUTE);
    expect((await h.webhook(firingAt(h.now(), behind))).status).toBe(200);
    const refused = await (await stale.submit(path, { name: 'alice' })).text();
    expect(refused).toContain('fired again since this link was sent');
    expect(await (await new FormClient(h.app).open(path)).text()).not.toContain('<form');
  });
});

describe('an alert dated ahead in the same group', () => {
  it("does not stretch the link over a later occurrence of the group's other alerts", async () => {
    const h = await ackHarness(db);
    // Anyone who can post to Alertmanager's API can put an alert dated 20 h ahead into a real alert's group.
    const first = firingAt(h.now(), -10 * MINUTE);
    const planted = structuredClone(first.alerts[0]!);
    Object.assign(planted, {
      fingerprint: 'f1a2b3c4d5e6f7a8',
      labels: { ...planted.labels, instance: 'planted:1' },
      startsAt: new Date(h.now() + 20 * 60 * MINUTE).toISOString(),
    });
    first.alerts.push(planted);
    expect((await h.webhook(first)).status).toBe(200);
    const path = ackPath(h.channels[0]!.received[0]);
    const stale = new FormClient(h.app);
    expect(await (await stale.open(path)).text()).toContain('<form');
    // The real alert resolves and, 20 minutes later, fires anew: an occurrence this link was never sent for.
    h.advance(MINUTE);
    const resolved = resolvedAt(first.alerts[0]!.startsAt, h.now());
    expect((await h.webhook(resolved)).status).toBe(200);
    h.advance(20 * MINUTE);
    expect((await h.webhook(firingAt(h.now(), 0))).status).toBe(200);
    const refused = await (await stale.submit(path, { name: 'alice' })).text();
    expect(refused).toContain('fired again since this link was sent');
    const fp = first.alerts[0]!.fingerprint;
    const audit = (await (await h.audit(fp)).json()) as {
      record?: { acknowledgement?: unknown };
    };
    expect(audit.record?.acknowledgement).toBeUndefined();
  });
});

describe("Alertmanager's endsAt and our clock", () => {
  it('an alert Alertmanager lists is firing though its endsAt is 2 minutes behind our clock', async () => {
    const now = Date.parse('2026-11-29T13:00:00Z');
    const alert = fixture('firing-kv-cache-critical').alerts[0]!;
    const am = await startLoopback({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([{ fingerprint: alert.fingerprint, endsAt: new Date(now - 2 * MINUTE).toISOString() }]),
    });
    try {
      const verdicts = await alertmanagerAlertState(am, 2000, () => now).statesOf(
        [alert],
        new AbortController().signal,
      );
      expect(verdicts.get(alert.fingerprint)).toMatchObject({ state: 'firing' });
    } finally {
      await am.close();
    }
  });
});
