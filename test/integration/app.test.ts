/**
 * The HTTP app and pipeline end to end in-process: real hono app, real DynamoDB ledger on dynalite,
 * recording channels (the platform wire formats are tested in test/integration/channels).
 */
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Alert } from '../../shared/alertmanager/schema.js';
import { createApp } from '../../shared/http/app.js';
import { DeliveryError, type Channel } from '../../shared/channels/channel.js';
import { DynamoDbDedupeStore } from '../../shared/store/dedupe-dynamodb.js';
import type { DedupeStore } from '../../shared/store/dedupe.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import { ensureTable } from '../../shared/store/table.js';
import type { Enrichment } from '../../shared/enrich/types.js';
import { createLogger } from '../../shared/core/logger.js';
import type { Notification } from '../../shared/render/notification.js';
import { Secret } from '../../shared/core/secret.js';
import { fixture, fixtureText } from '../helpers/fixtures.js';
import { testDeps } from '../helpers/pipeline-deps.js';

const TOKEN = 'test-token-0123456789abcdef';
let db: LocalDynamoDb;
let table = 0;

class RecordingChannel implements Channel {
  received: Notification[] = [];
  failuresLeft = 0;
  failRetryable = false;
  /** Set: each send waits for it (a delivery held in flight). */
  hold?: Promise<void>;
  constructor(readonly name: string) {}
  async send(n: Notification): Promise<void> {
    await this.hold;
    if (this.failuresLeft > 0) {
      this.failuresLeft--;
      throw new DeliveryError(`${this.name} is down`, { retryable: this.failRetryable });
    }
    this.received.push(n);
  }
}

beforeAll(async () => {
  db = await startLocalDynamoDb('app-test-0');
});
afterAll(async () => db.close());

let slack: RecordingChannel;
let sns: RecordingChannel;
let enriched: Alert[][];
let tableName: string;

beforeEach(async () => {
  tableName = `app-test-${++table}`;
  await ensureTable(db.client, tableName);
  slack = new RecordingChannel('slack');
  sns = new RecordingChannel('sns');
  enriched = [];
});

function app(opts: { token?: string; store?: DedupeStore; allowUnauthenticated?: boolean } = {}) {
  return createApp(
    {
      webhookToken: opts.token === undefined ? new Secret(TOKEN) : opts.token ? new Secret(opts.token) : undefined,
      allowUnauthenticated: opts.allowUnauthenticated,
    },
    testDeps({
      table: { client: db.client, tableName },
      ...(opts.store && { store: opts.store }),
      channels: [slack, sns],
      enrich: async (alerts) => {
        enriched.push(alerts);
        return new Map<string, Enrichment>(
          alerts.map((a) => [a.fingerprint, { status: 'unavailable', kind: 'queue', reason: 'test' }]),
        );
      },
      delivery: { timeoutMs: 1000, retries: 1, budgetMs: 5000 },
    }),
  );
}

function post(a: ReturnType<typeof app>, body: string, headers: Record<string, string> = {}) {
  return a.request('/v1/alertmanager', {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}`, ...headers },
  });
}

/** Response bodies are asserted field by field. */
async function json(res: Response): Promise<any> {
  return res.json();
}

async function itemCount(): Promise<number> {
  const out = await db.client.send(new ScanCommand({ TableName: tableName }));
  return out.Count ?? 0;
}

describe('POST /v1/alertmanager', () => {
  it('sends one message per group per channel, with every new alert, and summarises', async () => {
    const a = app();
    const res = await post(a, fixtureText('firing-queue-backlog-two-models'));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ received: 2, notified: 2, duplicates: 0, inFlight: 0, ok: true });
    for (const ch of [slack, sns]) {
      expect(ch.received).toHaveLength(1);
      expect(ch.received[0]!.alerts.map((x) => x.labels.model_name)).toEqual(['llama-3.1-70b', 'qwen3-8b']);
      expect(ch.received[0]!.alerts[0]!.enrichment).toEqual({ status: 'unavailable', kind: 'queue', reason: 'test' });
    }
  });

  it('sends nothing again for a retry, an HA peer, a reordered group or a repeat_interval resend', async () => {
    const a = app();
    await post(a, fixtureText('firing-queue-backlog-two-models'));
    const reordered = fixture('firing-queue-backlog-two-models');
    reordered.alerts.reverse();
    reordered.groupKey = '{}/{severity="warning"}:{alertname="VLLMQueueBacklog"}';
    reordered.receiver = 'another-route';
    for (const body of [fixtureText('firing-queue-backlog-two-models'), JSON.stringify(reordered)]) {
      const res = await post(a, body);
      expect(await res.json()).toMatchObject({ received: 2, notified: 0, duplicates: 2 });
    }
    expect(slack.received).toHaveLength(1);
    expect(sns.received).toHaveLength(1);
    expect(enriched).toHaveLength(1);
  });

  it('lets only one of two HA peers posting at once notify; the other is told to retry, then hears it is done', async () => {
    const a = app();
    // The winner's delivery is held until the other peer has its answer: the other finds the alert in flight.
    let answered!: () => void;
    slack.hold = new Promise((resolve) => (answered = resolve));
    const peer = () => Promise.resolve(post(a, fixtureText('firing-kv-cache-critical'))).finally(() => answered());
    const [r1, r2] = await Promise.all([peer(), peer()]);
    slack.hold = undefined;
    // The peer that found the alert in flight must not get a 200: if the holder dies, only a retry delivers it.
    expect([r1.status, r2.status].sort()).toEqual([200, 503]);
    expect(slack.received).toHaveLength(1);
    expect(sns.received).toHaveLength(1);
    const retry = await post(a, fixtureText('firing-kv-cache-critical'));
    expect(retry.status).toBe(200);
    expect(await json(retry)).toMatchObject({ duplicates: 1, inFlight: 0 });
  });

  it('loses nothing when the store fails part-way through a group: the claims taken are released and the retry sends them all', async () => {
    const store = new DynamoDbDedupeStore(db.client, { tableName, ttlSeconds: 3600 });
    let failures = 1;
    const flaky: DedupeStore = {
      readMany: store.readMany.bind(store),
      claim: async (alert, channels, nowMs) => {
        if (alert.fingerprint === 'b70e989fd7d03295' && failures-- > 0)
          throw new Error('ProvisionedThroughputExceededException');
        return store.claim(alert, channels, nowMs);
      },
      confirm: store.confirm.bind(store),
      markDelivered: store.markDelivered.bind(store),
      release: store.release.bind(store),
    };
    const a = app({ store: flaky });
    const first = await post(a, fixtureText('firing-queue-backlog-two-models'));
    expect(first.status).toBe(503);
    expect(slack.received).toHaveLength(0);
    const retry = await post(a, fixtureText('firing-queue-backlog-two-models'));
    expect(retry.status).toBe(200);
    expect(await json(retry)).toMatchObject({ notified: 2, inFlight: 0 });
    expect(slack.received.map((n) => n.alerts.length)).toEqual([2]);
  });

  it('notifies only the new alert when a group grows', async () => {
    const a = app();
    const one = fixture('firing-queue-backlog-two-models');
    one.alerts = one.alerts.slice(0, 1);
    await post(a, JSON.stringify(one));
    await post(a, fixtureText('firing-queue-backlog-two-models'));
    expect(slack.received.map((n) => n.alerts.map((x) => x.fingerprint))).toEqual([
      ['c10780c1bb3d6376'],
      ['b70e989fd7d03295'],
    ]);
  });

  it('sends one resolved message after firing', async () => {
    const a = app();
    await post(a, fixtureText('firing-queue-backlog-two-models'));
    await post(a, fixtureText('resolved-queue-backlog-two-models'));
    await post(a, fixtureText('resolved-queue-backlog-two-models'));
    expect(slack.received.map((n) => n.status)).toEqual(['firing', 'resolved']);
    expect(slack.received[1]!.alerts.every((x) => x.status === 'resolved')).toBe(true);
  });

  it('answers 502 when a channel fails, and the retry repairs only that channel', async () => {
    const a = app();
    sns.failuresLeft = 1;
    const first = await post(a, fixtureText('firing-kv-cache-critical'));
    expect(first.status).toBe(502);
    expect((await json(first)).channels).toMatchObject({
      slack: { status: 'delivered' },
      sns: { status: 'failed', error: 'sns is down' },
    });
    const retry = await post(a, fixtureText('firing-kv-cache-critical'));
    expect(retry.status).toBe(200);
    expect(await retry.json()).toMatchObject({ notified: 1, channels: { sns: { status: 'delivered' } } });
    expect(slack.received).toHaveLength(1);
    expect(sns.received).toHaveLength(1);
    const again = await post(a, fixtureText('firing-kv-cache-critical'));
    expect(await again.json()).toMatchObject({ notified: 0, duplicates: 1, channels: {} });
  });

  it('does not re-send to a channel whose success could not be written to the ledger', async () => {
    const store = new DynamoDbDedupeStore(db.client, { tableName, ttlSeconds: 3600 });
    const ledgerDown: DedupeStore = {
      readMany: store.readMany.bind(store),
      claim: store.claim.bind(store),
      confirm: store.confirm.bind(store),
      markDelivered: async () => {
        throw new Error('ledger unavailable');
      },
      release: store.release.bind(store),
    };
    const a = app({ store: ledgerDown });
    sns.failuresLeft = 1;
    expect((await post(a, fixtureText('firing-kv-cache-critical'))).status).toBe(502);
    const retry = await post(a, fixtureText('firing-kv-cache-critical'));
    // The claim kept its lease, so the immediate retry sends nothing (it waits for the lease to run out).
    expect(await json(retry)).toMatchObject({ notified: 0, inFlight: 1 });
    expect(slack.received).toHaveLength(1);
    expect(sns.received).toHaveLength(0);
  });

  it('retries a retryable failure within the request', async () => {
    const a = app();
    sns.failuresLeft = 1;
    sns.failRetryable = true;
    const res = await post(a, fixtureText('firing-kv-cache-critical'));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ channels: { sns: { status: 'delivered', attempts: 2 } } });
    expect(sns.received).toHaveLength(1);
  });

  it('answers 503, not 400, when the body cannot be read to the end (a dropped connection is not malformed JSON)', async () => {
    const half = fixtureText('firing-kv-cache-critical').slice(0, 100);
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(half));
        controller.error(new Error('socket hang up'));
      },
    });
    const res = await app().request('/v1/alertmanager', {
      method: 'POST',
      body,
      duplex: 'half',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
    } as RequestInit);
    expect(res.status).toBe(503);
    expect(await itemCount()).toBe(0);
  });

  it('answers 503 and sends nothing when DynamoDB is unreachable', async () => {
    const a = app({ store: new DynamoDbDedupeStore(db.client, { tableName: 'missing-table', ttlSeconds: 60 }) });
    const res = await post(a, fixtureText('firing-kv-cache-critical'));
    expect(res.status).toBe(503);
    expect(slack.received).toHaveLength(0);
  });
});

describe('accepts everything a correctly configured Alertmanager or compatible sender posts', () => {
  it('at the receiver URL with a trailing slash (`…/v1/alertmanager/`)', async () => {
    const res = await app().request('/v1/alertmanager/', {
      method: 'POST',
      body: fixtureText('firing-kv-cache-critical'),
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
    });
    expect(res.status).toBe(200);
    expect(slack.received).toHaveLength(1);
  });

  it('not at a path with two trailing slashes (`…/v1/alertmanager//`): 404, the routes are exact but for one slash', async () => {
    const res = await app().request('/v1/alertmanager//', {
      method: 'POST',
      body: fixtureText('firing-kv-cache-critical'),
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
    });
    expect(res.status).toBe(404);
    expect(slack.received).toHaveLength(0);
  });

  it("without `fingerprint` (Alertmanager < 0.19): computes Alertmanager's own, so an upgrade changes no dedupe key", async () => {
    const a = app();
    const old = fixture('firing-queue-backlog-two-models') as unknown as { alerts: Record<string, unknown>[] };
    for (const alert of old.alerts) delete alert.fingerprint;
    expect((await post(a, JSON.stringify(old))).status).toBe(200);
    expect(slack.received[0]!.alerts.map((x) => x.fingerprint)).toEqual(['c10780c1bb3d6376', 'b70e989fd7d03295']);
    // The same alerts from an upgraded Alertmanager (which sends the fingerprint) are duplicates.
    expect(await json(await post(a, fixtureText('firing-queue-backlog-two-models')))).toMatchObject({
      notified: 0,
      duplicates: 2,
    });
    expect(slack.received).toHaveLength(1);
  });

  it('with an empty `fingerprint`: computes it too', async () => {
    const body = fixture('firing-kv-cache-critical');
    const sent = body.alerts[0]!.fingerprint;
    body.alerts[0]!.fingerprint = '';
    expect((await post(app(), JSON.stringify(body))).status).toBe(200);
    expect(slack.received[0]!.alerts[0]!.fingerprint).toBe(sent);
  });

  it('with any UTF-8 label names and values, none renamed or dropped (a label named `__proto__` included)', async () => {
    const body = fixture('firing-kv-cache-critical');
    const labels = JSON.parse(
      '{"__proto__": "kept", "constructor": "too", "service.name": "vllm", "模型": "通义千问", "Env": "Prod", "e\u0301": "nfd"}',
    );
    body.alerts[0]!.labels = { ...body.alerts[0]!.labels, ...labels };
    expect((await post(app(), JSON.stringify(body))).status).toBe(200);
    const received = slack.received[0]!.alerts[0]!.labels;
    expect(Object.entries(received)).toEqual(expect.arrayContaining(Object.entries(labels)));
    expect(Object.keys(received)).toHaveLength(
      Object.keys(fixture('firing-kv-cache-critical').alerts[0]!.labels).length + 6,
    );
  });

  it('with timestamps in other offsets and nanoseconds, and unknown fields at every level', async () => {
    const body = fixture('firing-kv-cache-critical') as unknown as Record<string, any>;
    body.alerts[0].startsAt = '2026-11-29T20:42:23.143456789+08:00';
    body.alerts[0].endsAt = '0001-01-01T00:00:00Z';
    body.alerts[0].silenceURL = 'https://grafana.example.com/alerting/silence/new';
    body.alerts[0].values = { B: 0.97 };
    body.orgId = 1;
    body.title = '[FIRING:1] VLLMKVCacheCritical';
    const res = await post(app(), JSON.stringify(body));
    expect(res.status).toBe(200);
    expect(slack.received[0]!.alerts[0]!.startsAt).toBe('2026-11-29T20:42:23.143456789+08:00');
  });
});

describe('rejected requests claim nothing', () => {
  it('401 without or with a wrong bearer token', async () => {
    const a = app();
    expect((await post(a, fixtureText('firing-kv-cache-critical'), { authorization: '' })).status).toBe(401);
    expect(
      (await post(a, fixtureText('firing-kv-cache-critical'), { authorization: 'Bearer wrong-token-0123456789' }))
        .status,
    ).toBe(401);
    expect(await itemCount()).toBe(0);
  });

  it('accepts any request when no token is configured and unauthenticated use is allowed', async () => {
    const a = app({ token: '', allowUnauthenticated: true });
    expect((await post(a, fixtureText('firing-kv-cache-critical'), { authorization: '' })).status).toBe(200);
  });

  it('refuses every request (503, retried) when no token is configured and nothing allows it', async () => {
    const a = app({ token: '' });
    expect((await post(a, fixtureText('firing-kv-cache-critical'), { authorization: '' })).status).toBe(503);
    expect(await itemCount()).toBe(0);
  });

  it('400 for malformed JSON', async () => {
    const res = await post(app(), '{"version": "4",');
    expect(res.status).toBe(400);
    expect((await json(res)).error).toMatch(/malformed JSON/);
    expect(await itemCount()).toBe(0);
  });

  it('400 naming each offending field', async () => {
    const body = fixture('firing-queue-backlog-two-models') as unknown as Record<string, any>;
    delete body.alerts[1].startsAt;
    body.alerts[0].status = 'pending';
    body.version = '3';
    const res = await post(app(), JSON.stringify(body));
    expect(res.status).toBe(400);
    const paths = (await json(res)).issues.map((i: { path: string }) => i.path).sort();
    expect(paths).toEqual(['alerts.0.status', 'alerts.1.startsAt', 'version']);
    expect(await itemCount()).toBe(0);
  });

  it('413 for a body over the limit', async () => {
    const res = await post(app(), JSON.stringify({ padding: 'x'.repeat(6 * 1024 * 1024) }));
    expect(res.status).toBe(413);
    expect(await itemCount()).toBe(0);
  });

  it('ignores fields newer Alertmanagers add', async () => {
    const body = { ...fixture('firing-kv-cache-critical'), someNewField: { x: 1 } };
    expect((await post(app(), JSON.stringify(body))).status).toBe(200);
  });
});

describe('rejections are logged without the token', () => {
  /** The app with the bearer token set, writing its log lines into `lines`. */
  const loggingApp = () => {
    const lines: string[] = [];
    const a = createApp(
      { webhookToken: new Secret(TOKEN) },
      testDeps({
        table: { client: db.client, tableName },
        channels: [slack],
        logger: createLogger('info', (l) => lines.push(l)),
      }),
    );
    return { lines, a };
  };

  it('logs a line naming the status and reason', async () => {
    const { lines, a } = loggingApp();
    await post(a, fixtureText('firing-kv-cache-critical'), { authorization: 'Bearer wrong-token-0123456789' });
    await post(a, '{"version":"4"}');
    const logged = lines.map((l) => JSON.parse(l));
    expect(logged.map((l) => [l.event, l.status])).toEqual([
      ['request rejected', 401],
      ['request rejected', 400],
    ]);
    expect(logged[0].reason).toBe('missing or invalid bearer token');
    expect(lines.join('\n')).not.toMatch(/wrong-token|test-token/);
  });

  it('logs every permanent rejection of a webhook at error level, naming the cause (Alertmanager drops 4xx for good)', async () => {
    const { lines, a } = loggingApp();
    await post(a, '{"version": "4",');
    await post(a, JSON.stringify({ ...fixture('firing-kv-cache-critical'), version: '3' }));
    await post(a, JSON.stringify({ padding: 'x'.repeat(6 * 1024 * 1024) }));
    await post(a, fixtureText('firing-kv-cache-critical'), { authorization: '' });
    // A wrong receiver URL: a sender of ours (our token) at a path we do not serve.
    await a.request('/v1/alertmanagr', {
      method: 'POST',
      body: fixtureText('firing-kv-cache-critical'),
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    // The same without our token is noise: not logged as a rejection.
    await a.request('/v1/alertmanagr', { method: 'POST', body: fixtureText('firing-kv-cache-critical') });
    const logged = lines.map((l) => JSON.parse(l));
    expect(logged.map((l) => [l.level, l.event, l.status])).toEqual([
      ['error', 'request rejected', 400],
      ['error', 'request rejected', 400],
      ['error', 'request rejected', 413],
      ['error', 'request rejected', 401],
      ['error', 'request rejected', 404],
    ]);
    expect(logged[0].reason).toMatch(/^malformed JSON: /);
    expect(logged[1].issues).toEqual([expect.objectContaining({ path: 'version' })]);
    expect(logged[4]).toMatchObject({ path: '/v1/alertmanagr', reason: 'no route for POST /v1/alertmanagr' });
  });
});

describe('GET /healthz', () => {
  it('answers 200 without a token', async () => {
    const res = await app().request('/healthz');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });
});
