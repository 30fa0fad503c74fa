/**
 * "Acknowledge and silence for N hours" against the real Alertmanager (Debian package): the silence is
 * created through API v2 with equality matchers on every label of the alert, listed by Alertmanager's
 * API, stored on the acknowledgement and shown on the page. Alertmanager down: the ack still holds and
 * the page says the silence failed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSilence, silenceFor } from '../../shared/alertmanager/silences.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import { fixture } from '../helpers/fixtures.js';
import { startLoopback } from '../helpers/loopback.js';
import { freePort, startAlertmanager, type RunningProcess } from '../helpers/processes.js';
import { ackHarness, ackPath, FormClient } from './ack-harness.js';

const FP = '936e109b8c52c001';
let db: LocalDynamoDb;
let alertmanager: RunningProcess;

interface ListedSilence {
  id: string;
  status: { state: string };
  matchers: { name: string; value: string; isRegex: boolean; isEqual: boolean }[];
  createdBy: string;
  comment: string;
  startsAt: string;
  endsAt: string;
}

async function listSilences(): Promise<ListedSilence[]> {
  const res = await fetch(`${alertmanager.url}/api/v2/silences`, { signal: AbortSignal.timeout(5000) });
  return (await res.json()) as ListedSilence[];
}

beforeAll(async () => {
  db = await startLocalDynamoDb('ack-silence-0');
  // Only the alerts this file posts reach this Alertmanager; their notifications go nowhere.
  alertmanager = await startAlertmanager({ webhookUrl: `http://127.0.0.1:${await freePort()}/v1/alertmanager` });
}, 60_000);
afterAll(async () => {
  await alertmanager?.stop();
  await db?.close();
});

describe('Alertmanager silences', () => {
  it("creates a silence matching exactly the alert's labels", async () => {
    const alert = fixture('firing-kv-cache-critical').alerts[0]!;
    const now = Date.now();
    const silence = silenceFor(alert, { hours: 1, by: 'alice', nowMs: now });
    const id = await createSilence(alertmanager, silence, 5000);
    const listed = (await listSilences()).find((s) => s.id === id)!;
    expect(listed.status.state).toBe('active');
    expect(listed.createdBy).toBe('alice');
    expect(listed.comment).toBe(`Acknowledged by alice via llm-alert-pipeline (alert ${FP})`);
    expect(listed.matchers.map((m) => [m.name, m.value, m.isEqual, m.isRegex]).sort()).toEqual(
      Object.entries(alert.labels)
        .map(([k, v]) => [k, v, true, false])
        .sort(),
    );
    // Alertmanager moves a start in the past to its own now; the end is ours.
    expect(Date.parse(listed.endsAt)).toBe(now + 3_600_000);
    expect(silence.endsAt).toBe(new Date(now + 3_600_000).toISOString());
  });

  it('carries hostile label values verbatim, and the silence mutes exactly that alert', async () => {
    const labels = {
      alertname: 'X',
      summary: 'say "hi"\nC:\\x\t',
      model_name: '模型🔥',
      bad: 'a\ufffdb',
      looks_like_regex: 'qwen3.*|x',
    };
    const id = await createSilence(
      alertmanager,
      silenceFor({ labels, fingerprint: 'f00d' }, { hours: 1, by: 'alice', nowMs: Date.now() }),
      5000,
    );
    const listed = (await listSilences()).find((s) => s.id === id)!;
    expect(Object.fromEntries(listed.matchers.map((m) => [m.name, m.value]))).toEqual(labels);
    // Alertmanager marks an alert silenced when it is read: post this alert and a near miss.
    const nearMiss = { ...labels, looks_like_regex: 'qwen3-8b' };
    const posted = await fetch(`${alertmanager.url}/api/v2/alerts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([{ labels }, { labels: nearMiss }]),
      signal: AbortSignal.timeout(5000),
    });
    expect(posted.status).toBe(200);
    const alerts = (await (
      await fetch(`${alertmanager.url}/api/v2/alerts`, { signal: AbortSignal.timeout(5000) })
    ).json()) as { labels: Record<string, string>; status: { silencedBy: string[] } }[];
    const silencedBy = (l: Record<string, string>) =>
      alerts.find((a) => JSON.stringify(a.labels) === JSON.stringify(Object.fromEntries(Object.entries(l).sort())))
        ?.status.silencedBy;
    expect(silencedBy(labels)).toEqual([id]);
    expect(silencedBy(nearMiss)).toEqual([]);
  });

  it('does not follow a redirect: a 3xx is an error and the redirect target never gets the silence', async () => {
    const target = await startLoopback({ status: 200, body: '{"silenceID":"from-redirect"}' });
    const redirecting = await startLoopback({ status: 307, headers: { location: `${target.url}/api/v2/silences` } });
    try {
      const silence = silenceFor(fixture('firing-kv-cache-critical').alerts[0]!, {
        hours: 1,
        by: 'alice',
        nowMs: Date.now(),
      });
      await expect(createSilence(redirecting, silence, 5000)).rejects.toThrow(/^Alertmanager answered HTTP 307/);
      expect(redirecting.requests).toHaveLength(1);
      expect(target.requests).toHaveLength(0);
    } finally {
      await Promise.all([target.close(), redirecting.close()]);
    }
  });

  it('acknowledges and silences from the page, stores the silence id and shows it', async () => {
    const h = await ackHarness(db, { ALERTMANAGER_URL: alertmanager.url });
    await h.webhook(fixture('firing-kv-cache-critical'));
    const path = ackPath(h.channels[0]!.received[0]);
    const client = new FormClient(h.app);
    await client.open(path);
    expect(client.lastHtml).toContain('Acknowledge and silence');
    expect(client.lastHtml).toMatch(/<option value="4">4 hours<\/option>/);
    expect((await client.submit(path, { name: 'alice', action: 'ack-silence', hours: '4' })).status).toBe(200);
    const id = /silenced \(<code><bdi>([0-9a-f-]{36})<\/bdi><\/code>\)/.exec(client.lastHtml)?.[1];
    expect(id, client.lastHtml).toBeDefined();
    expect(client.lastHtml).toContain(`silence <code><bdi>${id}</bdi></code>`);

    const listed = (await listSilences()).find((s) => s.id === id)!;
    expect(listed).toMatchObject({ createdBy: 'alice', status: { state: 'active' } });
    const audit = (await (await h.audit(FP)).json()) as {
      record: { acknowledgement: { silenceId: string } };
      history: { type: string; silenceId?: string; endsAt?: string }[];
    };
    expect(audit.record.acknowledgement.silenceId).toBe(id);
    const silenced = audit.history.find((e) => e.type === 'silenced')!;
    expect(silenced.silenceId).toBe(id);
    expect(Date.parse(listed.endsAt)).toBe(Date.parse(silenced.endsAt!));
    expect(Math.round((Date.parse(listed.endsAt) - Date.parse(listed.startsAt)) / 3_600_000)).toBe(4);
    // The follow-up names the silence too.
    expect(h.channels[0]!.received[1]!.alerts[0]!.acknowledgement?.silenceId).toBe(id);
  });

  it('keeps the ack and reports the failure when Alertmanager is down', async () => {
    const h = await ackHarness(db, { ALERTMANAGER_URL: `http://127.0.0.1:${await freePort()}` });
    await h.webhook(fixture('firing-kv-cache-critical'));
    const path = ackPath(h.channels[0]!.received[0]);
    const client = new FormClient(h.app);
    await client.open(path);
    await client.submit(path, { name: 'bob', action: 'ack-silence', hours: '1' });
    expect(client.lastHtml).toMatch(/silence failed: <bdi>Alertmanager did not answer \(ECONNREFUSED\)/);
    expect(client.lastHtml).toMatch(/Acknowledged by <strong><bdi>bob<\/bdi><\/strong>/);
    const audit = (await (await h.audit(FP)).json()) as { history: { type: string }[] };
    expect(audit.history.map((e) => e.type)).toContain('silence failed');
  });

  it('makes no silence of label values that were cut (it would match nothing) and says so', async () => {
    const h = await ackHarness(db, { ALERTMANAGER_URL: alertmanager.url });
    const message = fixture('firing-kv-cache-critical');
    message.alerts[0]!.labels.pod = 'p'.repeat(17 * 1024);
    await h.webhook(message);
    const before = (await listSilences()).length;
    const path = ackPath(h.channels[0]!.received[0]);
    const client = new FormClient(h.app);
    await client.open(path);
    await client.submit(path, { name: 'dana', action: 'ack-silence', hours: '1' });
    expect(client.lastHtml).toMatch(
      /silence failed: <bdi>not silenced: some of its label values were too long or not valid text and were cut/,
    );
    expect(client.lastHtml).toMatch(/Acknowledged by <strong><bdi>dana<\/bdi><\/strong>/);
    expect((await listSilences()).length).toBe(before);
  });
});
