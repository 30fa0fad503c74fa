/**
 * Grafana-managed alerting as a sender: its webhook contact point posts Alertmanager's body plus its own
 * fields with `"version": "1"` (test/fixtures/grafana, bodies as Grafana 10.4, 11.3 and 12.1 send them).
 * Each is accepted through the real app, pipeline and store; the channels show Grafana's values and its own
 * links (its silence form, not Alertmanager's; its dashboard panel; the rule), use its screenshot where we
 * have no chart, and the page neither offers an Alertmanager silence for its alerts nor asks Alertmanager
 * or Prometheus about them.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import { renderSlack } from '../../shared/channels/slack/index.js';
import { renderFeishu } from '../../shared/channels/feishu/index.js';
import { renderPagerDuty } from '../../shared/channels/pagerduty/render.js';
import { renderText } from '../../shared/render/text.js';
import { alertLinks } from '../../shared/render/content.js';
import { ackHarness, ackPath, FormClient, type AckHarness } from './ack-harness.js';

const DIR = fileURLToPath(new URL('../fixtures/grafana/', import.meta.url));
const grafana = (name: string) => JSON.parse(readFileSync(`${DIR}${name}.json`, 'utf8')) as Record<string, unknown>;
const FIXTURES = [
  'grafana-10.4-test-notification',
  'grafana-11.3-firing-kv-cache',
  'grafana-12.1-firing-and-resolved-queue',
] as const;

let db: LocalDynamoDb;
let h: AckHarness;
beforeAll(async () => {
  db = await startLocalDynamoDb('grafana-sender');
  h = await ackHarness(db, { ALERTMANAGER_URL: 'http://127.0.0.1:9' });
});
afterAll(async () => db.close());

describe('Grafana webhook bodies are accepted', () => {
  it.each(FIXTURES)('%s: 200, every alert recorded and sent', async (name) => {
    const body = grafana(name);
    const before = h.channels[0]!.received.length;
    const res = await h.webhook(body);
    expect(res.status, await res.clone().text()).toBe(200);
    const sent = h.channels[0]!.received.slice(before).flatMap((n) => n.alerts.map((a) => a.fingerprint));
    expect(sent.sort()).toEqual((body.alerts as { fingerprint: string }[]).map((a) => a.fingerprint).sort());
  });

  it('a body that is neither version 4 nor version 1 is still refused, naming both', async () => {
    const res = await h.webhook({ ...grafana('grafana-11.3-firing-kv-cache'), version: '2' });
    expect(res.status).toBe(400);
    expect(await res.text()).toMatch(/version 4.*version 1|version 1.*version 4/);
  });

  it("an Alertmanager body that only says version 1 is not Grafana's: refused, naming Grafana's missing fields", async () => {
    const { orgId: _o, title: _t, state: _s, message: _m, ...bare } = grafana('grafana-11.3-firing-kv-cache');
    const res = await h.webhook(bare);
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('"path":"orgId"');
  });
});

describe("Grafana's values, links and image in the channels", () => {
  const notificationOf = async (name: string) => {
    const before = h.channels[0]!.received.length;
    const body = grafana(name);
    // A fresh group key and fingerprints: the same alerts posted again would be duplicates.
    const suffix = `${name}-${Date.now()}`;
    (body as { groupKey: string }).groupKey += suffix;
    for (const a of body.alerts as { fingerprint: string; labels: Record<string, string> }[]) {
      a.fingerprint = `${a.fingerprint}${suffix.length}${Math.random().toString(16).slice(2, 8)}`;
    }
    expect((await h.webhook(body)).status).toBe(200);
    return h.channels[0]!.received[before]!;
  };

  it('Grafana 11.3: values, its silence form, the panel, the rule and the screenshot', async () => {
    const n = await notificationOf('grafana-11.3-firing-kv-cache');
    const alert = n.alerts[0]!;
    const links = Object.fromEntries(alertLinks(alert, n.externalURL).map((l) => [l.label, l.url]));
    expect(links.Silence).toBe(
      'http://grafana.example.com:3000/alerting/silence/new?alertmanager=grafana&matcher=alertname%3DvLLM+KV+cache+nearly+full&matcher=grafana_folder%3DvLLM&matcher=instance%3D10.0.0.7%3A8000&matcher=job%3Dvllm&matcher=model_name%3Dqwen3-8b&matcher=severity%3Dcritical&orgId=1',
    );
    expect(links.Dashboard).toBe('http://grafana.example.com:3000/d/vllm-fleet?orgId=1&viewPanel=4');
    expect(links.Rule).toBe('http://grafana.example.com:3000/alerting/grafana/ddv1x2kqz9lhcb/view?orgId=1');
    expect(links.Graph).toBeUndefined();
    const slack = renderSlack(n);
    expect(JSON.stringify(slack.blocks)).toContain('B=0.9731 · C=1');
    expect(slack.blocks).toContainEqual(
      expect.objectContaining({
        type: 'image',
        image_url: 'http://grafana.example.com:3000/public/img/attachments/Xk3vQ9mJ2pLw7rTa.png',
      }),
    );
    expect(JSON.stringify(renderFeishu(n, { locale: 'en' }).card)).toContain('B=0.9731 · C=1');
    expect(renderText(n)).toContain('B=0.9731 · C=1');
    const [event] = renderPagerDuty(n);
    expect(JSON.stringify(event)).toContain('alerting/silence/new?alertmanager=grafana');
  });

  it('Grafana 10.4 test: no values, so its value string; nothing to link but its silence form', async () => {
    const n = await notificationOf('grafana-10.4-test-notification');
    expect(renderText(n)).toContain("[ metric='foo' labels={instance=bar} value=10 ]");
    expect(alertLinks(n.alerts[0]!, n.externalURL).map((l) => l.label)).toEqual(['Silence']);
  });

  it('Grafana 12.1: the resolved alert offers no silence; the firing one pages as a warning', async () => {
    const n = await notificationOf('grafana-12.1-firing-and-resolved-queue');
    const [firing, resolved] = n.alerts;
    expect(alertLinks(firing!, n.externalURL).map((l) => l.label)).toEqual(['Rule', 'Dashboard', 'Runbook', 'Silence']);
    expect(alertLinks(resolved!, n.externalURL).map((l) => l.label)).toEqual(['Rule', 'Dashboard', 'Runbook']);
    const [trigger] = renderPagerDuty(n);
    expect(trigger).toMatchObject({ payload: { severity: 'warning' } });
  });
});

describe('the acknowledgement page for Grafana alerts', () => {
  it('acknowledges, shows the values and links, and offers no Alertmanager silence', async () => {
    const before = h.channels[0]!.received.length;
    const body = grafana('grafana-11.3-firing-kv-cache');
    (body as { groupKey: string }).groupKey += '-page';
    (body.alerts as { fingerprint: string }[])[0]!.fingerprint = '5a20cc3468488c0b';
    expect((await h.webhook(body)).status).toBe(200);
    const path = ackPath(h.channels[0]!.received[before]);
    const client = new FormClient(h.app);
    const page = await (await client.open(path)).text();
    expect(page).toContain('B=0.9731 · C=1');
    expect(page).toContain('alerting/silence/new?alertmanager=grafana');
    expect(page).not.toContain('Acknowledge and silence');
    const done = await (await client.submit(path, { name: 'alice' })).text();
    expect(done).toMatch(/acknowledged/i);
  });
});
