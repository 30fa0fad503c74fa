/**
 * The enrichment an alert record keeps, on the real app, pipeline, ack runtime and dynalite: the
 * record stores no query text the alert's labels rebuild, yet the acknowledgement page shows the
 * same chart the message linked; a record written by an earlier version (every query stored, one
 * of them no longer what the code builds) reads and renders as it was stored.
 */
import { UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Alert } from '../../shared/alertmanager/schema.js';
import { chartSpec } from '../../shared/chart/spec.js';
import { verifyChartToken } from '../../shared/chart/token.js';
import { Secret } from '../../shared/core/secret.js';
import { ENRICHERS } from '../../shared/enrich/kinds/index.js';
import type { Enrichment } from '../../shared/enrich/types.js';
import { recordKey } from '../../shared/store/keys.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import { fixture } from '../helpers/fixtures.js';
import { fakeContext } from '../unit/enrich/fake-context.js';
import { ACK_SECRET, PUBLIC_URL, ackHarness, ackPath, FormClient, type AckHarness } from './ack-harness.js';

const KEYS = { current: new Secret(ACK_SECRET) };
const CHARTS = { publicUrl: PUBLIC_URL, keys: KEYS, ttlSeconds: 3600 };

let db: LocalDynamoDb;
beforeAll(async () => {
  db = await startLocalDynamoDb('record-enrichment-0');
});
afterAll(async () => db.close());

/** The enrichment the kv-cache enricher makes for the alert, with values now and when fired. */
async function kvEnrichment(alert: Alert): Promise<Enrichment> {
  const { ctx } = fakeContext([alert]);
  const answer = [{ metric: alert.labels, time: 0, value: 0.97 }];
  const { signals } = await ENRICHERS.kv_cache.enrich(alert as never, { ...ctx, instant: async () => answer });
  return { status: 'enriched', kind: 'kv_cache', signals };
}

/** The kv-cache fixture, its rule `vllm:gpu_cache_usage_perc > 0.95` or, without a threshold, the bare metric. */
function body(threshold: boolean) {
  const b = fixture('firing-kv-cache-critical');
  if (!threshold)
    b.alerts[0]!.generatorURL = 'http://prometheus.example.com:9090/graph?g0.expr=vllm%3Agpu_cache_usage_perc&g0.tab=1';
  return b;
}

async function harness(sent: Map<string, Enrichment>): Promise<AckHarness> {
  return ackHarness(db, {}, {}, { enrich: async () => sent, page: { charts: CHARTS } });
}

/** The chart spec signed into the page's image URL. */
async function pageChart(h: AckHarness) {
  const html = await (await new FormClient(h.app).open(ackPath(h.channels[0]!.received[0]))).text();
  const token = /<img src="https:\/\/ack\.example\.com\/v1\/chart\/([A-Za-z0-9_.-]+)\.png"/.exec(html)?.[1];
  expect(token, html).toBeDefined();
  return { html, spec: verifyChartToken(token!, KEYS, h.now()).spec };
}

async function storedEnrichmentJson(h: AckHarness, fingerprint: string): Promise<string> {
  const item = (await h.scan())
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, { S?: string }>)
    .find((i) => i.pk?.S === recordKey(fingerprint));
  return item!.enrichmentJson!.S!;
}

describe('the enrichment an alert record keeps', () => {
  it.each([true, false])(
    'stores no rebuildable query, and the page shows the chart the message was sent with (rule threshold: %s)',
    async (threshold) => {
      const b = body(threshold);
      const alert = b.alerts[0]!;
      const sent = await kvEnrichment(alert);
      const h = await harness(new Map([[alert.fingerprint, sent]]));
      expect((await h.webhook(b)).status).toBe(200);
      const json = await storedEnrichmentJson(h, alert.fingerprint);
      expect(json).not.toContain('"query"');
      expect(json.length).toBeLessThan(JSON.stringify(sent).length / 2);
      const { spec } = await pageChart(h);
      const asSent = chartSpec({ ...alert, enrichment: sent })!;
      expect(spec).toEqual(asSent);
      expect(asSent.title).toBe('VLLMKVCacheNearlyFull · KV cache usage');
    },
  );

  it('reads a record written with every query (an earlier version), one of them no longer what the code builds, as it was stored', async () => {
    const b = body(false);
    const alert = b.alerts[0]!;
    const h = await harness(new Map([[alert.fingerprint, await kvEnrichment(alert)]]));
    expect((await h.webhook(b)).status).toBe(200);
    // The old shape, as earlier versions wrote it: each signal with its query text.
    const old =
      '{"status":"enriched","kind":"kv_cache","signals":[' +
      '{"name":"kv_cache_usage_ratio","label":"KV cache usage","value":0.97,"unit":"ratio","query":"max by (model_name) (vllm:gpu_cache_usage_perc{model_name=\\"qwen3-8b\\"})","atStart":{"$number":"NaN"}},' +
      '{"name":"requests_running","label":"Requests running","value":12,"unit":"count","query":"sum by (model_name, instance, job) (vllm:num_requests_running{model_name=\\"qwen3-8b\\",instance=\\"127.0.0.1:9800\\",job=\\"vllm\\"})","atStart":3}]}';
    await db.client.send(
      new UpdateItemCommand({
        TableName: h.tableName,
        Key: { pk: { S: recordKey(alert.fingerprint) } },
        UpdateExpression: 'SET enrichmentJson = :e',
        ExpressionAttributeValues: { ':e': { S: old } },
      }),
    );
    const { spec, html } = await pageChart(h);
    expect(spec).toMatchObject({
      query: 'max by (model_name) (vllm:gpu_cache_usage_perc{model_name="qwen3-8b"})',
      title: 'VLLMKVCacheNearlyFull · KV cache usage',
      unit: 'ratio',
    });
    expect(html).toContain('<strong>Requests running</strong>');
  });
});
