/**
 * Fail closed: without `WEBHOOK_TOKEN` the webhook refuses everything (503, an error
 * line, a metric) unless unauthenticated use is allowed; `WEBHOOK_TOKEN_PREVIOUS` is accepted during a
 * rotation; tokens may change at run time; unauthenticated requests are refused before the body is read.
 */
import { beforeAll, afterAll, beforeEach, describe, expect, it } from 'vitest';
import { createApp, type AppDeps, type AppSettings } from '../../shared/http/app.js';
import type { Channel } from '../../shared/channels/channel.js';
import { testDeps } from '../helpers/pipeline-deps.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import { ensureTable } from '../../shared/store/table.js';
import { createLogger } from '../../shared/core/logger.js';
import { prometheusMetrics, type PrometheusMetrics } from '../../shared/metrics/prometheus.js';
import type { Notification } from '../../shared/render/notification.js';
import { Secret } from '../../shared/core/secret.js';
import { fixtureText } from '../helpers/fixtures.js';

const TOKEN = 'current-token-0123456789';
const PREVIOUS = 'previous-token-0123456789';
let db: LocalDynamoDb;
let tables = 0;
let sent: Notification[];
let lines: Record<string, unknown>[];
let prom: PrometheusMetrics;

beforeAll(async () => {
  db = await startLocalDynamoDb('auth-test-0');
});
afterAll(async () => db.close());
beforeEach(() => {
  sent = [];
  lines = [];
  prom = prometheusMetrics();
});

async function app(settings: AppSettings, extra: Partial<AppDeps> = {}) {
  const tableName = `auth-${++tables}`;
  await ensureTable(db.client, tableName);
  const channel: Channel = { name: 'slack', send: async (n) => void sent.push(n) };
  return createApp(settings, {
    ...testDeps({
      table: { client: db.client, tableName },
      channels: [channel],
      logger: createLogger('info', (l) => lines.push(JSON.parse(l))),
      metrics: prom.metrics,
    }),
    metricsScrape: prom.scrape,
    ...extra,
  });
}

const post = (
  a: Awaited<ReturnType<typeof app>>,
  headers: Record<string, string> = {},
  body: string = fixtureText('firing-kv-cache-critical'),
) =>
  a.request('/v1/alertmanager', { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });

async function scrape(): Promise<string> {
  return (await prom.scrape()).body;
}

describe('without WEBHOOK_TOKEN', () => {
  it('refuses every webhook with 503, logs an error and counts it, and sends nothing', async () => {
    const a = await app({});
    const res = await post(a);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ error: expect.stringMatching(/WEBHOOK_TOKEN/) });
    expect(sent).toEqual([]);
    expect(lines.filter((l) => l.level === 'error').map((l) => l.event)).toEqual(['webhook refused']);
    expect(lines.find((l) => l.event === 'webhook refused')).toMatchObject({
      reason: 'no_token_configured',
      status: 503,
    });
    const text = await scrape();
    expect(text).toContain('llm_alert_pipeline_webhook_unauthenticated_total{reason="no_token_configured"} 1');
    expect(text).toContain('llm_alert_pipeline_webhook_requests_total{code="503"} 1');
  });

  it('accepts webhooks when unauthenticated use is allowed (ALLOW_UNAUTHENTICATED=true, or npm start on loopback)', async () => {
    const a = await app({ allowUnauthenticated: true });
    expect((await post(a)).status).toBe(200);
    expect(sent).toHaveLength(1);
  });

  it('refuses GET /v1/alerts and GET /metrics the same way', async () => {
    const a = await app({});
    expect((await a.request('/metrics')).status).toBe(503);
    expect((await a.request('/healthz')).status).toBe(200);
  });
});

describe('with WEBHOOK_TOKEN', () => {
  it('accepts the current and the previous token, and nothing else', async () => {
    const a = await app({ webhookToken: new Secret(TOKEN), webhookTokenPrevious: new Secret(PREVIOUS) });
    expect((await post(a, { authorization: `Bearer ${TOKEN}` })).status).toBe(200);
    expect((await post(a, { authorization: `Bearer ${PREVIOUS}` })).status).toBe(200);
    expect((await post(a, { authorization: 'Bearer some-other-token-0123456789' })).status).toBe(401);
    expect((await post(a, {})).status).toBe(401);
    expect((await post(a, { authorization: 'Basic dXNlcjpwYXNz' })).status).toBe(400);
    const text = await scrape();
    expect(text).toContain('llm_alert_pipeline_webhook_unauthenticated_total{reason="invalid_token"} 1');
    expect(text).toContain('llm_alert_pipeline_webhook_unauthenticated_total{reason="missing_token"} 1');
    expect(text).toContain('llm_alert_pipeline_webhook_unauthenticated_total{reason="malformed_header"} 1');
    expect(text).toContain('llm_alert_pipeline_webhook_requests_total{code="200"} 2');
    expect(text).toContain('llm_alert_pipeline_webhook_requests_total{code="401"} 2');
    expect(JSON.stringify(lines)).not.toMatch(/current-token|previous-token|some-other-token/);
  });

  it('counts a wrong token on the webhook (a broken Alertmanager) apart from internet noise', async () => {
    const a = await app({ webhookToken: new Secret(TOKEN) });
    for (let i = 0; i < 3; i++) expect((await post(a, {})).status).toBe(401); // scanners: no token
    await a.request('/wp-login.php', { method: 'POST', body: 'log=admin' });
    await a.request('/.env');
    const wrongElsewhere = await a.request('/metrics', {
      headers: { authorization: 'Bearer some-other-token-0123456789' },
    });
    expect(wrongElsewhere.status).toBe(401);
    let text = await scrape();
    expect(text).toContain('llm_alert_pipeline_webhook_wrong_token_total 0');
    expect(text).toContain('llm_alert_pipeline_unsolicited_requests_total{reason="no_token"} 3');
    expect(text).toContain('llm_alert_pipeline_unsolicited_requests_total{reason="unknown_path"} 2');
    expect((await post(a, { authorization: 'Bearer stale-token-0123456789' })).status).toBe(401);
    text = await scrape();
    expect(text).toContain('llm_alert_pipeline_webhook_wrong_token_total 1');
  });

  it('follows tokens that change at run time (a re-read settings secret)', async () => {
    let tokens: { current?: Secret; previous?: Secret } = { current: new Secret(PREVIOUS) };
    const a = await app({ webhookToken: new Secret(PREVIOUS) }, { webhookTokens: async () => tokens });
    expect((await post(a, { authorization: `Bearer ${TOKEN}` })).status).toBe(401);
    tokens = { current: new Secret(TOKEN), previous: new Secret(PREVIOUS) };
    expect((await post(a, { authorization: `Bearer ${TOKEN}` })).status).toBe(200);
    expect((await post(a, { authorization: `Bearer ${PREVIOUS}` })).status).toBe(200);
    tokens = {};
    expect((await post(a, { authorization: `Bearer ${TOKEN}` })).status).toBe(503);
  });

  it('refuses an unauthenticated request before reading its body', async () => {
    const a = await app({ webhookToken: new Secret(TOKEN) });
    let pulled = 0;
    const body = new ReadableStream({
      pull: (controller) => {
        pulled++;
        controller.enqueue(new TextEncoder().encode('{'));
      },
    });
    const res = await a.request('/v1/alertmanager', {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json' },
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(401);
    expect(pulled).toBeLessThanOrEqual(1); // a stream may pre-pull one chunk on creation; reading it would pull more
  });

  it('protects GET /metrics with the same token', async () => {
    const a = await app({ webhookToken: new Secret(TOKEN) });
    expect((await a.request('/metrics')).status).toBe(401);
    const res = await a.request('/metrics', { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(await res.text()).toContain('# TYPE llm_alert_pipeline_notifications_total counter');
  });
});

describe('webhook_requests_total counts every answer Alertmanager could get', () => {
  it('counts a POST to a wrong receiver path (404, which Alertmanager drops) and logs it', async () => {
    const a = await app({ webhookToken: new Secret(TOKEN) });
    const res = await a.request('/v1/alertmanagers', {
      method: 'POST',
      body: fixtureText('firing-kv-cache-critical'),
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
    });
    expect(res.status).toBe(404);
    expect(await scrape()).toContain('llm_alert_pipeline_webhook_requests_total{code="404"} 1');
    expect(lines.find((l) => l.event === 'request rejected')).toMatchObject({ level: 'error', status: 404 });
    // A browser's or a scanner's GET of an unknown page is not a webhook answer.
    await a.request('/favicon.ico');
    expect(await scrape()).toContain('llm_alert_pipeline_webhook_requests_total{code="404"} 1');
  });

  it('counts a POST to an unknown path without our token as noise only (no webhook answer, no error log)', async () => {
    const a = await app({ webhookToken: new Secret(TOKEN) });
    for (const authorization of [undefined, 'Bearer not-ours']) {
      const res = await a.request('/wp-login.php', {
        method: 'POST',
        body: 'log=admin&pwd=admin',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...(authorization ? { authorization } : {}) },
      });
      expect(res.status).toBe(404);
    }
    const scraped = await scrape();
    expect(scraped).toContain('llm_alert_pipeline_unsolicited_requests_total{reason="unknown_path"} 2');
    expect(scraped).toContain('llm_alert_pipeline_webhook_requests_total{code="404"} 0');
    expect(lines.filter((l) => l.level === 'error')).toEqual([]);
  });

  it('counts the 503 of a dedupe store that fails', async () => {
    const failing = {
      claim: async () => {
        throw new Error('store down');
      },
    } as unknown as AppDeps['store'];
    const a = await app({ webhookToken: new Secret(TOKEN) }, { store: failing });
    expect((await post(a, { authorization: `Bearer ${TOKEN}` })).status).toBe(503);
    expect(await scrape()).toContain('llm_alert_pipeline_webhook_requests_total{code="503"} 1');
  });
});
