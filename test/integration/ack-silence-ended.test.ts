/**
 * A silence from the page ends while the alert still fires: Alertmanager sends the alert again (the
 * same `fingerprint` and `startsAt`), and the pipeline announces it again, to every channel, with an
 * Acknowledge link of its own; the acknowledgement (which came with the silence) is over, so a critical
 * alert escalates again. While the silence lasts, a copy (an HA peer that has not heard of it, a post
 * in flight when it was created) is still a duplicate. The silence is created through the page in the
 * real Alertmanager (Debian package); the pipeline's clock is the harness's, moved past the silence's end.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import { fixture } from '../helpers/fixtures.js';
import { startLoopback, type Loopback } from '../helpers/loopback.js';
import { freePort, startAlertmanager, type RunningProcess } from '../helpers/processes.js';
import { ackHarness, ackPath, FormClient, type AckHarness } from './ack-harness.js';

const FP = '936e109b8c52c001';
const MINUTE = 60_000;
let db: LocalDynamoDb;
let alertmanager: RunningProcess;
let target: Loopback;

beforeAll(async () => {
  db = await startLocalDynamoDb('ack-silence-ended-0');
  alertmanager = await startAlertmanager({ webhookUrl: `http://127.0.0.1:${await freePort()}/v1/alertmanager` });
  target = await startLoopback();
}, 60_000);
afterAll(async () => {
  await Promise.allSettled([alertmanager?.stop(), target?.close()]);
  await db?.close();
});

interface Audit {
  record: { acknowledgement?: { silenceId?: string; silenceEndsAt?: string }; escalation?: { state: string } };
  history: { type: string; generation?: number; endsAt?: string }[];
}
const audit = async (h: AckHarness) => (await (await h.audit(FP)).json()) as Audit;
const sent = (h: AckHarness) => h.channels.map((c) => c.received.length);

/** Acknowledges the alert from the link of `channel`'s last message, silencing it for `hours`. */
async function ackAndSilence(h: AckHarness, hours: number): Promise<void> {
  const path = ackPath(h.channels[0]!.received.at(-1));
  const client = new FormClient(h.app);
  await client.open(path);
  expect((await client.submit(path, { name: 'alice', action: 'ack-silence', hours: String(hours) })).status).toBe(200);
  expect(client.lastHtml).toMatch(/silenced \(<code>/);
}

describe('a silence from the page that ends while the alert still fires', () => {
  it('is announced again, with a new Acknowledge link, and escalates again', async () => {
    const h = await ackHarness(db, {
      ALERTMANAGER_URL: alertmanager.url,
      ESCALATION_SLACK_WEBHOOK_URL: `${target.url}/services/T0/B0/escalation`,
      ESCALATION_DELAY_SECONDS: '900',
    });
    const body = fixture('firing-kv-cache-critical');
    expect((await h.webhook(body)).status).toBe(200);
    expect(h.runtime.timers!.pending()).toHaveLength(1);
    await ackAndSilence(h, 1);
    expect(h.runtime.timers!.pending()).toHaveLength(0);
    const acked = await audit(h);
    expect(acked.record.acknowledgement?.silenceEndsAt).toBe(acked.history.find((e) => e.type === 'silenced')!.endsAt);
    const before = sent(h);

    // Within the silence, a copy is still the acknowledged occurrence.
    h.advance(50 * MINUTE);
    expect(await (await h.webhook(body)).json()).toMatchObject({ notified: 0, duplicates: 1 });
    expect(sent(h)).toEqual(before);

    // The silence has ended and Alertmanager sends the alert again.
    h.advance(11 * MINUTE);
    expect(await (await h.webhook(body)).json()).toMatchObject({ notified: 1, duplicates: 0 });
    expect(sent(h)).toEqual(before.map((n) => n + 1));
    for (const channel of h.channels) {
      const again = channel.received.at(-1)!;
      expect(again.status).toBe('firing');
      expect(again.alerts[0]!.acknowledgement).toBeUndefined();
      expect(again.acknowledgeUrl).toBeDefined();
      expect(again.generations).toEqual({ [FP]: 1 });
    }
    const state = await audit(h);
    expect(state.record.acknowledgement).toBeUndefined();
    expect(state.record.escalation).toMatchObject({ state: 'scheduled' });
    expect(h.runtime.timers!.pending()).toHaveLength(1);
    expect(state.history.filter((e) => e.type === 'notified').map((e) => e.generation ?? 0)).toEqual([0, 1]);

    // The new message's link acknowledges the alert anew; a copy after that is a duplicate again.
    const client = new FormClient(h.app);
    const path = ackPath(h.channels[0]!.received.at(-1));
    await client.open(path);
    expect((await client.submit(path, { name: 'bob', action: 'ack' })).status).toBe(200);
    expect((await audit(h)).record.acknowledgement).toMatchObject({ by: 'bob' });
    h.advance(MINUTE);
    expect(await (await h.webhook(body)).json()).toMatchObject({ notified: 0, duplicates: 1 });
  });

  it('stays acknowledged when the acknowledgement came without a silence (reminders stay suppressed)', async () => {
    const h = await ackHarness(db, {});
    const body = fixture('firing-kv-cache-critical');
    await h.webhook(body);
    const path = ackPath(h.channels[0]!.received[0]);
    const client = new FormClient(h.app);
    await client.open(path);
    expect((await client.submit(path, { name: 'alice', action: 'ack' })).status).toBe(200);
    h.advance(30 * MINUTE);
    expect(await (await h.webhook(body)).json()).toMatchObject({ notified: 0, duplicates: 1 });
  });
});
