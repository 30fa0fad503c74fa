/**
 * Every outbound call to Prometheus and Alertmanager carries the configured credentials, as the runtime
 * wires them from the settings: enrichment, the acknowledgement page's values now, the chart's range
 * query and the re-fire check against a loopback Prometheus; the silence, the escalation's silence check
 * and the re-fire check against a loopback Alertmanager. Each kind of credential is checked on the wire:
 * `Authorization: Bearer`, `Authorization: Basic`, the extra headers, and SigV4 (service `aps`, the
 * configured region, `x-amz-date`, `x-amz-content-sha256`), the signature recomputed with the AWS SDK's
 * signer over the request the server received. A refusal reads `401 from Prometheus` without the secret;
 * a redirect is not followed, so the credentials never reach the address it names.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { alertStatus } from '../../shared/alertmanager/alert-status.js';
import { createSilence, SilenceError, silenceFor } from '../../shared/alertmanager/silences.js';
import { silentLogger } from '../../shared/core/logger.js';
import { createAckRuntime } from '../../shared/runtime/ack.js';
import { loadConfig, type Config } from '../../shared/runtime/config.js';
import { createDeps, type RuntimeDeps } from '../../shared/runtime/deps.js';
import { startLoopback, type Loopback, type RecordedRequest } from '../helpers/loopback.js';
import { latencyAlert } from '../fixtures/prometheus/alerts.js';
import { expectSigV4 } from '../helpers/sigv4.js';

const TOKEN = 'prom-bearer-token-0123456789';
const USER_PASSWORD = 'pipeline:s3cret-pass-word';
const TENANT = 'team-a';
const ACCESS_KEY = 'AKIDLOOPBACKTEST0001';
const SECRET_KEY = 'loopback-test-secret-access-key-0123456789';
const SESSION = 'loopback-test-session-token';

const EMPTY_VECTOR = JSON.stringify({ status: 'success', data: { resultType: 'vector', result: [] } });
const EMPTY_MATRIX = JSON.stringify({ status: 'success', data: { resultType: 'matrix', result: [] } });

/** Answers like Prometheus (instant and range queries) and Alertmanager (alerts, silences). */
function answer(request: RecordedRequest) {
  const json = { 'content-type': 'application/json' };
  if (request.path.startsWith('/api/v1/query_range')) return { status: 200, headers: json, body: EMPTY_MATRIX };
  if (request.path.startsWith('/api/v1/query')) return { status: 200, headers: json, body: EMPTY_VECTOR };
  if (request.path.startsWith('/api/v2/silences')) return { status: 200, headers: json, body: '{"silenceID":"s-1"}' };
  if (request.path.startsWith('/api/v2/alerts')) return { status: 200, headers: json, body: '[]' };
  return { status: 404, body: 'no such path' };
}

type Kind = 'bearer' | 'basic' | 'headers' | 'sigv4';

/** The settings of one kind, for `server` (`PROMETHEUS` or `ALERTMANAGER`). */
function credentialEnv(kind: Kind, server: string): Record<string, string> {
  switch (kind) {
    case 'bearer':
      return { [`${server}_BEARER_TOKEN`]: TOKEN };
    case 'basic':
      return { [`${server}_BASIC_AUTH`]: USER_PASSWORD };
    case 'headers':
      return { [`${server}_HEADERS`]: `X-Scope-OrgID: ${TENANT}\n\nX-Extra-Key:  k-123 ` };
    case 'sigv4':
      return { [`${server}_SIGV4_REGION`]: 'eu-west-1' };
  }
}

/** Checks that `request` carries the credentials of `kind`. */
async function expectCredentials(kind: Kind, request: RecordedRequest, port: number): Promise<void> {
  const { headers } = request;
  if (kind === 'bearer') expect(headers.authorization).toBe(`Bearer ${TOKEN}`);
  if (kind === 'basic') expect(headers.authorization).toBe(`Basic ${Buffer.from(USER_PASSWORD).toString('base64')}`);
  if (kind === 'headers') {
    expect(headers['x-scope-orgid']).toBe(TENANT);
    expect(headers['x-extra-key']).toBe('k-123');
    expect(headers.authorization).toBeUndefined();
  }
  if (kind === 'sigv4')
    await expectSigV4(request, {
      service: 'aps',
      region: 'eu-west-1',
      accessKeyId: ACCESS_KEY,
      secretAccessKey: SECRET_KEY,
      sessionToken: SESSION,
      port,
    });
}

const portOf = (server: Loopback) => Number(new URL(server.url).port);

describe.each<Kind>(['bearer', 'basic', 'headers', 'sigv4'])('credentials of kind %s', (kind) => {
  let prometheus: Loopback;
  let alertmanager: Loopback;
  let config: Config;
  let deps: RuntimeDeps;
  const dynamodb = new DynamoDBClient({
    region: 'eu-west-1',
    endpoint: 'http://127.0.0.1:9',
    credentials: { accessKeyId: 'x', secretAccessKey: 'y' },
  });

  beforeAll(async () => {
    vi.stubEnv('AWS_ACCESS_KEY_ID', ACCESS_KEY);
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', SECRET_KEY);
    vi.stubEnv('AWS_SESSION_TOKEN', SESSION);
    [prometheus, alertmanager] = await Promise.all([startLoopback(answer), startLoopback(answer)]);
    config = loadConfig({
      PROMETHEUS_URL: prometheus.url,
      ALERTMANAGER_URL: alertmanager.url,
      PUBLIC_URL: 'https://alerts.example.com',
      ACK_SECRET: 'ack-secret-for-tests-0123456789abcdef',
      ESCALATION_SLACK_WEBHOOK_URL: 'http://127.0.0.1:9/escalation',
      ENRICHMENT_TIMEOUT_MS: '5000',
      ...credentialEnv(kind, 'PROMETHEUS'),
      ...credentialEnv(kind, 'ALERTMANAGER'),
    });
    deps = createDeps(config, { dynamodb }, silentLogger);
  });
  afterAll(async () => {
    vi.unstubAllEnvs();
    dynamodb.destroy();
    await Promise.all([prometheus?.close(), alertmanager?.close()]);
  });
  afterEach(() => {
    prometheus.requests.length = 0;
    alertmanager.requests.length = 0;
  });

  async function expectAllCarry(server: Loopback): Promise<void> {
    expect(server.requests.length).toBeGreaterThan(0);
    for (const request of server.requests) await expectCredentials(kind, request, portOf(server));
  }

  it('enrichment queries carry them', async () => {
    const result = await deps.enrich([latencyAlert]);
    expect(result.get(latencyAlert.fingerprint)?.status).toBe('enriched');
    await expectAllCarry(prometheus);
  });

  it("the acknowledgement page's values now carry them", async () => {
    await deps.ackPage!.refresh!([latencyAlert]);
    await expectAllCarry(prometheus);
  });

  it("the chart's range query carries them", async () => {
    const end = new Date('2026-12-01T12:00:00Z');
    await deps.chartRoutes!.prometheus.rangeQuery('vllm:num_requests_waiting', {
      start: new Date(end.getTime() - 3600_000),
      end,
      step: 60,
    });
    expect(prometheus.requests[0]!.path).toMatch(/^\/api\/v1\/query_range/);
    await expectAllCarry(prometheus);
  });

  it('the re-fire check carries them to Prometheus and to Alertmanager', async () => {
    await deps.alertState!.statesOf([latencyAlert], AbortSignal.timeout(5000));
    await expectAllCarry(prometheus);
    // Prometheus's ALERTS answer is empty, so Alertmanager is asked too.
    await expectAllCarry(alertmanager);
  });

  it('a silence carries them (a POST: its body is signed too)', async () => {
    const silences = deps.ackPage!.silences!;
    const silence = silenceFor(latencyAlert, { hours: 1, by: 'oncall', nowMs: Date.parse('2026-12-01T12:00:00Z') });
    await expect(createSilence(silences.alertmanager, silence, 5000)).resolves.toBe('s-1');
    expect(alertmanager.requests.map((r) => r.method)).toEqual(['POST']);
    expect(JSON.parse(alertmanager.requests[0]!.body.toString('utf8'))).toEqual(silence);
    await expectAllCarry(alertmanager);
  });

  it("the escalation's silence check carries them", async () => {
    const escalation = createAckRuntime(config, { dynamodb }, [], { logger: silentLogger }).escalation!;
    await expect(alertStatus(escalation.alertmanager!, latencyAlert, 5000)).resolves.toBeUndefined();
    await expectAllCarry(alertmanager);
  });
});

describe('refusals and redirects', () => {
  const servers: Loopback[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });
  /** A server answering every request with `reply`. */
  async function serve(reply: Parameters<typeof startLoopback>[0]): Promise<Loopback> {
    const server = await startLoopback(reply);
    servers.push(server);
    return server;
  }
  const noDynamoDb = () => new DynamoDBClient({ region: 'eu-west-1', endpoint: 'http://127.0.0.1:9' });

  it('a Prometheus refusing the token reads "401 from Prometheus", never the token', async () => {
    // An auth proxy that quotes what it was sent.
    const server = await serve((r) => ({
      status: 401,
      headers: { 'content-type': 'text/html' },
      body: `<html><title>401 Authorization Required</title><body>bad ${String(r.headers.authorization)}</body></html>`,
    }));
    const config = loadConfig({ PROMETHEUS_URL: server.url, PROMETHEUS_BEARER_TOKEN: TOKEN });
    const enrichment = (await createDeps(config, { dynamodb: noDynamoDb() }, silentLogger).enrich([latencyAlert])).get(
      latencyAlert.fingerprint,
    )!;
    expect(enrichment.status).toBe('unavailable');
    const reason = (enrichment as { reason: string }).reason;
    expect(reason).toMatch(/^401 from Prometheus: 401 Authorization Required/);
    expect(reason).not.toContain(TOKEN);
    expect(server.requests[0]!.headers.authorization).toBe(`Bearer ${TOKEN}`);
  });

  it('an Alertmanager refusing the password: the silence error names the status, never the password', async () => {
    const server = await serve((r) => ({
      status: 403,
      body: `denied: ${String(r.headers.authorization)} s3cret-pass-word`,
    }));
    const config = loadConfig({ ALERTMANAGER_URL: server.url, ALERTMANAGER_BASIC_AUTH: USER_PASSWORD });
    const endpoint = { url: config.alertmanagerUrl!, credentials: config.alertmanagerCredentials };
    const silence = silenceFor(latencyAlert, { hours: 1, by: 'oncall', nowMs: 0 });
    const error = await createSilence(endpoint, silence, 5000).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SilenceError);
    expect((error as Error).message).toMatch(/^Alertmanager answered HTTP 403: denied/);
    expect((error as Error).message).not.toContain('s3cret-pass-word');
    expect((error as Error).message).not.toContain(Buffer.from(USER_PASSWORD).toString('base64'));
  });

  it('a redirect is not followed: the credentials never reach the address it names', async () => {
    const elsewhere = await serve(answer);
    const server = await serve((r) => ({ status: 302, headers: { location: `${elsewhere.url}${r.path}` } }));
    const config = loadConfig({
      PROMETHEUS_URL: server.url,
      ALERTMANAGER_URL: server.url,
      PROMETHEUS_BEARER_TOKEN: TOKEN,
      ALERTMANAGER_BEARER_TOKEN: TOKEN,
    });
    const deps = createDeps(config, { dynamodb: noDynamoDb() }, silentLogger);
    const enrichment = (await deps.enrich([latencyAlert])).get(latencyAlert.fingerprint)!;
    expect(enrichment.status).toBe('unavailable');
    const endpoint = { url: config.alertmanagerUrl!, credentials: config.alertmanagerCredentials };
    await expect(alertStatus(endpoint, latencyAlert, 5000)).rejects.toThrow(/HTTP 302/);
    await expect(
      createSilence(endpoint, silenceFor(latencyAlert, { hours: 1, by: 'oncall', nowMs: 0 }), 5000),
    ).rejects.toThrow(/HTTP 302/);
    expect(server.requests.length).toBeGreaterThanOrEqual(3);
    expect(elsewhere.requests).toEqual([]);
  });
});
