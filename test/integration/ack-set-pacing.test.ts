/**
 * The page's "Acknowledge all N" of a set larger than one step, as in Lambda: the POST records the
 * decision and answers; the steps (asynchronous invocations, recorded here and run in order) acknowledge
 * the set and send a channel that counts one event per alert against a rate limit (PagerDuty) its
 * `acknowledge` events paced at half that rate, so the next real alert still gets through: no 60 s
 * window holds more than 60 of them. The clock is injected: pacing waits move it, nothing sleeps.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InvokeCommand } from '@aws-sdk/client-lambda';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import { runSetStep } from '../../shared/ack/set-job.js';
import type { Notification } from '../../shared/render/notification.js';
import { ackHarness, FormClient, type AckHarness } from './ack-harness.js';
import { stormWebhook } from './storm-webhook.js';

const ALERTS = 120;
const STEP = 50;
let db: LocalDynamoDb;
let h: AckHarness;
const invocations: { Payload?: unknown }[] = [];
/** The paced channel's events: when each was sent (harness clock) and for which alert. */
const events: { atMs: number; fingerprint: string }[] = [];

beforeAll(async () => {
  db = await startLocalDynamoDb('ack-set-pacing');
  const lambda = {
    send: async (command: InvokeCommand) => {
      invocations.push(command.input);
      return {};
    },
  } as never;
  h = await ackHarness(db, {}, { ackSetSteps: { functionName: () => 'receiver', lambda } });
  const pager = h.channels[1]!;
  pager.eventsPerMinute = 120;
  const send = pager.send.bind(pager);
  pager.send = async (n: Notification) => {
    if (n.kind === 'acknowledged') for (const a of n.alerts) events.push({ atMs: h.now(), fingerprint: a.fingerprint });
    return send(n);
  };
  const setJobs = h.runtime.page!.setJobs!;
  const deps = setJobs.deps;
  setJobs.deps = () => ({ ...deps(), stepAlerts: STEP, sleep: async (ms: number) => h.advance(ms) });
  expect((await h.webhook(stormWebhook(ALERTS))).status).toBe(200);
}, 120_000);
afterAll(async () => {
  await db?.close();
});

describe('"Acknowledge all" on the page, beyond one step', () => {
  it('answers with the decision, then acknowledges in steps and paces the per-alert events', async () => {
    const digest = h.channels[0]!.received[0]!;
    const path = new URL(digest.acknowledgeUrl!).pathname;
    const client = new FormClient(h.app);
    await client.open(path);
    const page = await (await client.submit(path, { name: 'erin' })).text();
    expect(page).toContain('Acknowledging all 120 alerts as <strong><bdi>erin</bdi></strong>');
    expect(events).toHaveLength(0);
    expect(invocations).toHaveLength(1);

    const setJobs = h.runtime.page!.setJobs!;
    let steps = 0;
    while (invocations.length) {
      const { ackSetStep } = JSON.parse(new TextDecoder().decode(invocations.shift()!.Payload as Uint8Array)) as {
        ackSetStep: string;
      };
      steps += 1;
      if ((await runSetStep(ackSetStep, setJobs.deps())) === 'more') await setJobs.deps().dispatch(ackSetStep);
    }
    // 3 steps acknowledge (50, 50, 20); 6 send the 120 paced events, 20 each.
    expect(steps).toBe(9);
    expect(new Set(events.map((e) => e.fingerprint)).size).toBe(ALERTS);
    expect(events).toHaveLength(ALERTS);
    for (const e of events)
      expect(events.filter((o) => o.atMs >= e.atMs && o.atMs < e.atMs + 60_000).length).toBeLessThanOrEqual(60);
    // The other channel's follow-ups come with the acknowledging steps, one each.
    expect(h.channels[0]!.received.filter((n) => n.kind === 'acknowledged').map((n) => n.alerts.length)).toEqual([
      50, 50, 20,
    ]);
    const records = await h.runtime.tracker.stores.records.getMany(
      stormWebhook(ALERTS).alerts.map((a) => a.fingerprint),
      h.now(),
    );
    expect([...records.values()].filter((r) => r.acknowledgement?.by === 'erin')).toHaveLength(ALERTS);
  }, 180_000);
});

describe("paced events under a key several alerts share (a PagerDuty storm's)", () => {
  it('sends each shared key once for the whole job, across its paced steps, and paces by events sent', async () => {
    const invoked: string[] = [];
    const lambda = {
      send: async (command: InvokeCommand) => {
        invoked.push(JSON.parse(new TextDecoder().decode(command.input.Payload as Uint8Array)).ackSetStep);
        return {};
      },
    } as never;
    const harness = await ackHarness(db, {}, { ackSetSteps: { functionName: () => 'receiver', lambda } });
    const pager = harness.channels[1]!;
    pager.eventsPerMinute = 120;
    // Every third alert is a member of one storm (one key); the others go under their own keys.
    const shared = new Set(
      stormWebhook(ALERTS)
        .alerts.filter((_, i) => i % 3 === 0)
        .map((a) => a.fingerprint),
    );
    Object.assign(pager, {
      ackEventKeys: async (records: { alert: { fingerprint: string } }[]) =>
        records.map((r) => (shared.has(r.alert.fingerprint) ? 'group/storm' : `own/${r.alert.fingerprint}`)),
    });
    const waits: number[] = [];
    const setJobs = harness.runtime.page!.setJobs!;
    const deps = setJobs.deps;
    setJobs.deps = () => ({ ...deps(), stepAlerts: STEP, sleep: async (ms: number) => void waits.push(ms) });
    expect((await harness.webhook(stormWebhook(ALERTS))).status).toBe(200);
    const path = new URL(harness.channels[0]!.received[0]!.acknowledgeUrl!).pathname;
    const client = new FormClient(harness.app);
    await client.open(path);
    expect((await client.submit(path, { name: 'frank' })).status).toBe(200);
    while (invoked.length) {
      const id = invoked.shift()!;
      if ((await runSetStep(id, setJobs.deps())) === 'more') await setJobs.deps().dispatch(id);
    }
    const sent = pager.received
      .filter((n) => n.kind === 'acknowledged')
      .flatMap((n) => n.alerts.map((a) => a.fingerprint));
    // 80 own keys and one shared: 81 events, in 5 paced steps of at most 20.
    expect(sent.filter((fp) => shared.has(fp))).toHaveLength(1);
    expect(sent).toHaveLength(ALERTS - shared.size + 1);
    expect(pager.received.filter((n) => n.kind === 'acknowledged').length).toBeGreaterThan(1);
    // Each wait is for the events the step before sent (at most 20 at 1 s each), never for the alerts behind them.
    for (const ms of waits) expect(ms).toBeLessThanOrEqual(20 * 1000);
  }, 180_000);
});
