/**
 * A storm is enriched whole, in one call (enrichment costs queries per kind, not per alert), so its
 * digest can show values and a shared cause; `enrichment_unavailable_total` counts its alerts by
 * their own reason, as for any group, and no longer under `storm`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../shared/http/app.js';
import type { Channel } from '../../shared/channels/channel.js';
import { testDeps } from '../helpers/pipeline-deps.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import { ensureTable } from '../../shared/store/table.js';
import type { Enrichment } from '../../shared/enrich/types.js';
import { prometheusMetrics } from '../../shared/metrics/prometheus.js';
import { Secret } from '../../shared/core/secret.js';
import { stormWebhook } from './storm-webhook.js';

const TOKEN = 'storm-metric-token-0123456789';
let db: LocalDynamoDb;
beforeAll(async () => {
  db = await startLocalDynamoDb('storm-enrichment-metric');
  await ensureTable(db.client, 'storm-metric');
});
afterAll(() => db.close());

const unavailable = async (scrape: () => Promise<{ body: string }>) =>
  Object.fromEntries(
    [
      ...(await scrape()).body.matchAll(
        /^llm_alert_pipeline_enrichment_unavailable_total\{reason="([^"]+)"\} (\d+)$/gm,
      ),
    ].map((m) => [m[1], Number(m[2])]),
  );

describe('enrichment_unavailable_total in a storm', () => {
  it('enriches a storm in one call and counts its unavailable alerts by their own reason', async () => {
    const prom = prometheusMetrics();
    const sent: number[] = [];
    const channel: Channel = { name: 'slack', send: async (n) => void sent.push(n.alerts.length) };
    const enriched: string[][] = [];
    const app = createApp(
      { webhookToken: new Secret(TOKEN) },
      testDeps({
        metrics: prom.metrics,
        table: { client: db.client, tableName: 'storm-metric' },
        channels: [channel],
        enrich: async (alerts) => {
          enriched.push(alerts.map((a) => a.fingerprint));
          return new Map<string, Enrichment>(
            alerts.map((a) => [
              a.fingerprint,
              { status: 'unavailable', kind: 'queue', reason: 'test', cause: 'timeout' },
            ]),
          );
        },
        delivery: { timeoutMs: 1000, retries: 0, budgetMs: 5000 },
      }),
    );
    const post = (body: unknown) =>
      app.request('/v1/alertmanager', {
        method: 'POST',
        body: JSON.stringify(body),
        headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
      });
    expect((await post(stormWebhook(60))).status).toBe(200);
    expect(sent).toEqual([60]);
    expect(enriched.map((call) => call.length)).toEqual([60]);
    expect(await unavailable(prom.scrape)).toEqual({ timeout: 60 });

    const small = stormWebhook(2, 0, '2026-11-29T13:00:00.000Z');
    small.groupKey = '{}:{cluster="prod-us"}';
    small.alerts.forEach((a, i) => (a.fingerprint = `t${i}`));
    expect((await post(small)).status).toBe(200);
    expect(await unavailable(prom.scrape)).toEqual({ timeout: 62 });
  });
});
