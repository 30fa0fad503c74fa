/**
 * "Acknowledge and silence" on many alerts against the real Alertmanager (Debian's binary): the
 * silences are grouped by what they match (one per rule and shared labels, a quoted regex over the
 * label that differs), and Alertmanager itself reports every acknowledged alert silenced and no other:
 * not an alert outside the set whose value a bare regex would match (`10x0…` for `10.0…`), not one
 * of the same rule with one more label, not one of another instance.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireBinaries } from '../helpers/binaries.js';
import { freePort, pollUntil, startAlertmanager, type RunningProcess } from '../helpers/processes.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import { ackHarness, type AckHarness } from '../integration/ack-harness.js';
import { acknowledge } from '../../shared/ack/acknowledge.js';

let alertmanager: RunningProcess;
let db: LocalDynamoDb;
let h: AckHarness;

type Labels = Record<string, string>;
const kv = (i: number): Labels => ({
  alertname: 'VllmKvCacheHigh',
  severity: 'warning',
  model_name: 'llama',
  instance: `10.0.0.${i}:8000`,
});
const gpu = (model: string, host: string): Labels => ({
  alertname: 'GpuMemoryHigh',
  model_name: model,
  instance: host,
});
/** The set acknowledged: 40 instances of one rule, 6 model × host pairs of another. */
const SET: Labels[] = [
  ...Array.from({ length: 40 }, (_, i) => kv(i)),
  ...['m0', 'm1', 'm2'].flatMap((m) => ['gpu-a', 'gpu-b'].map((host) => gpu(m, host))),
];
/** Not acknowledged: each would be silenced by a careless grouping. */
const OUTSIDE: Labels[] = [
  { ...kv(1), instance: '10x0.0.1:8000' },
  kv(41),
  { ...kv(2), replica: 'b' },
  gpu('m0', 'gpu-c'),
];

type Listed = { fingerprint: string; labels: Labels; status: { silencedBy: string[] } };
const listAlerts = async (): Promise<Listed[]> =>
  (await (await fetch(`${alertmanager.url}/api/v2/alerts`)).json()) as Listed[];
const same = (a: Labels, b: Labels) =>
  JSON.stringify(Object.entries(a).sort()) === JSON.stringify(Object.entries(b).sort());

beforeAll(async () => {
  requireBinaries();
  alertmanager = await startAlertmanager({ webhookUrl: `http://127.0.0.1:${await freePort()}/v1/alertmanager` });
  db = await startLocalDynamoDb('ack-set-silence-e2e');
  h = await ackHarness(db, { ALERTMANAGER_URL: alertmanager.url });
  const startsAt = new Date(Date.now() - 60_000).toISOString();
  const res = await fetch(`${alertmanager.url}/api/v2/alerts`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify([...SET, ...OUTSIDE].map((labels) => ({ labels, startsAt }))),
  });
  expect(res.status).toBe(200);
}, 60_000);
afterAll(async () => {
  await alertmanager?.stop();
  await db?.close();
});

describe('acknowledge and silence a storm against the real Alertmanager', () => {
  it('creates one silence per rule and shared labels, and silences exactly the acknowledged alerts', async () => {
    const listed = await pollUntil(
      async () => {
        const all = await listAlerts();
        return all.length === SET.length + OUTSIDE.length ? all : undefined;
      },
      () => 'alerts in Alertmanager',
    );
    const mine = SET.map((labels) => listed.find((a) => same(a.labels, labels))!);
    const startsAt = new Date(Date.now() - 60_000).toISOString();
    const webhook = {
      version: '4',
      groupKey: '{}:{alertname="storm"}',
      status: 'firing',
      receiver: 'llm-alert-pipeline',
      groupLabels: {},
      commonLabels: {},
      commonAnnotations: {},
      externalURL: alertmanager.url,
      truncatedAlerts: 0,
      alerts: mine.map((a) => ({
        status: 'firing',
        labels: a.labels,
        annotations: { summary: 'storm' },
        startsAt,
        endsAt: '0001-01-01T00:00:00Z',
        generatorURL: 'http://prometheus.invalid/graph',
        fingerprint: a.fingerprint,
      })),
    };
    expect((await h.webhook(webhook)).status).toBe(200);

    const issuedAt = Math.floor(h.now() / 1000) + 1;
    const claims = {
      fingerprints: mine.map((a) => a.fingerprint),
      group: 'g',
      channel: 'slack',
      issuedAt,
      expiresAt: issuedAt + 3600,
    };
    const result = await acknowledge(claims, { by: 'alice', silenceHours: 1 }, h.runtime.page!);
    expect(result.alerts.map((a) => a.outcome)).toEqual(mine.map(() => 'acknowledged'));

    const silences = (
      (await (await fetch(`${alertmanager.url}/api/v2/silences`)).json()) as { createdBy: string }[]
    ).filter((s) => s.createdBy === 'alice');
    // 40 instances of one rule: one silence; GpuMemoryHigh over 3 models × 2 hosts: one per host.
    expect(silences).toHaveLength(3);
    const after = await pollUntil(
      async () => {
        const all = await listAlerts();
        return all.filter((a) => a.status.silencedBy.length).length >= SET.length ? all : undefined;
      },
      () => 'alerts in Alertmanager',
    );
    const silenced = after.filter((a) => a.status.silencedBy.length).map((a) => a.labels);
    expect(silenced).toHaveLength(SET.length);
    for (const labels of SET) expect(silenced.some((s) => same(s, labels))).toBe(true);
    for (const labels of OUTSIDE) expect(silenced.some((s) => same(s, labels))).toBe(false);
  }, 60_000);
});
