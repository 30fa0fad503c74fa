/**
 * Which alerts get a chart URL, through the real app and pipeline (dedupe ledger on dynalite,
 * recording channels): every alert of a detailed message when charts are on, each URL's token naming
 * that alert's own chart; none when charts are off; none in a storm-size message (its digest shows no
 * alert in detail, and signing thousands of URLs would only cost the storm's time).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Channel } from '../../shared/channels/channel.js';
import { verifyChartToken } from '../../shared/chart/token.js';
import type { ChartLinkSettings } from '../../shared/chart/url.js';
import { Secret } from '../../shared/core/secret.js';
import type { Enrichment } from '../../shared/enrich/types.js';
import { createApp } from '../../shared/http/app.js';
import type { Notification } from '../../shared/render/notification.js';
import { testClock } from '../helpers/clock.js';
import { testDeps } from '../helpers/pipeline-deps.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import { ensureTable } from '../../shared/store/table.js';
import { fixture } from '../helpers/fixtures.js';

const TOKEN = 'chart-pipeline-token-0123456789';
const KEY = new Secret('chart-pipeline-secret-0123456789abcdef');
const clock = testClock();
const CHARTS: ChartLinkSettings = { publicUrl: 'https://alerts.example.com', keys: { current: KEY }, ttlSeconds: 3600 };
let db: LocalDynamoDb;
let table = 0;
let received: Notification[];

beforeAll(async () => {
  db = await startLocalDynamoDb('chart-pipeline-0');
});
afterAll(() => db.close());
beforeEach(() => {
  received = [];
});

async function send(body: unknown, charts?: ChartLinkSettings, more: Channel[] = []): Promise<void> {
  const tableName = `chart-pipeline-${++table}`;
  await ensureTable(db.client, tableName);
  const channel: Channel = { name: 'slack', send: async (n) => void received.push(n) };
  const app = createApp(
    { webhookToken: new Secret(TOKEN) },
    testDeps({
      table: { client: db.client, tableName },
      clock,
      channels: [channel, ...more],
      enrich: async (alerts) =>
        new Map<string, Enrichment>(
          alerts.map((a) => [a.fingerprint, { status: 'unavailable', kind: 'queue', reason: 'test' }]),
        ),
      delivery: { timeoutMs: 1000, retries: 0, budgetMs: 5000 },
      charts,
    }),
  );
  const res = await app.request('/v1/alertmanager', {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
  });
  expect(res.status).toBe(200);
}

describe('chart URLs in the pipeline', () => {
  it("gives each alert of a detailed message its own signed chart: the rule's compared value and threshold", async () => {
    const message = fixture('firing-queue-backlog-two-models');
    await send(message, CHARTS);
    const alerts = received[0]!.alerts;
    expect(alerts).toHaveLength(2);
    for (const alert of alerts) {
      const token = new URL(alert.chartUrl!).pathname
        .split('/')
        .pop()!
        .replace(/\.png$/, '');
      const { spec } = verifyChartToken(token, { current: KEY }, clock.now());
      expect(spec).toMatchObject({
        // Narrowed to the alert's own model: a chart link never reads the fleet's series.
        query: `sum by (model_name) (vllm:num_requests_waiting{model_name="${alert.labels.model_name}"})`,
        labels: alert.labels,
        threshold: { op: '>', value: 50 },
      });
    }
  });

  it("signs a zh-CN channel's charts in Chinese, the English channel's as before", async () => {
    const zh: Notification[] = [];
    const feishu: Channel = { name: 'feishu', locale: 'zh-CN', send: async (n) => void zh.push(n) };
    await send(fixture('firing-queue-backlog-two-models'), CHARTS, [feishu]);
    const opened = (n: Notification | undefined) =>
      verifyChartToken(
        new URL(n!.alerts[0]!.chartUrl!).pathname
          .split('/')
          .pop()!
          .replace(/\.png$/, ''),
        { current: KEY },
        clock.now(),
      );
    expect(opened(zh[0]).locale).toBe('zh-CN');
    expect(opened(received[0]).locale).toBe('en');
    expect(opened(zh[0]).spec.query).toBe(opened(received[0]).spec.query);
  });

  it('gives none when charts are off', async () => {
    await send(fixture('firing-queue-backlog-two-models'));
    expect(received[0]!.alerts.some((a) => a.chartUrl)).toBe(false);
  });

  it('gives none in a storm-size message', async () => {
    const message = fixture('firing-queue-backlog-two-models');
    const template = message.alerts[0]!;
    message.alerts = Array.from({ length: 60 }, (_, i) => ({
      ...template,
      fingerprint: `${i.toString(16).padStart(16, '0')}`,
      labels: { ...template.labels, model_name: `m-${i}` },
    }));
    await send(message, CHARTS);
    expect(received[0]!.alerts).toHaveLength(60);
    expect(received[0]!.alerts.some((a) => a.chartUrl)).toBe(false);
  });
});
