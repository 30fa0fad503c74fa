/**
 * AMP through SNS, end to end on the deployed code: the receiver's asset of the stack subscribed to a
 * created AMP topic (`-c ampTopic=create`), cold-started as Lambda runs it with its settings in the
 * settings secret, invoked with the recorded Lambda SNS events of test/fixtures/amp, against dynalite and
 * loopback Slack, Feishu and SNS stand-ins that
 * enforce the platforms' limits. Each event must put on the wire exactly what the equivalent
 * Alertmanager webhook puts there (the same group through the Function URL, into a fresh table): for
 * the default text, the webhook less what the text cannot carry (start time, group labels, external URL).
 * An unparsable body still reaches every channel, and is counted; a channel failure makes the
 * handler throw (Lambda retries the event) and the retry sends only what is missing. The variant names its
 * workspace (`-c ampWorkspaceArn`), so the function queries the workspace's query endpoint and its alert
 * manager with SigV4: a loopback stand-in at the same paths checks each request's signature (service `aps`,
 * the workspace's region, the function's role session) with the AWS SDK's signer.
 */
import { readFileSync } from 'node:fs';
import type { SNSEvent } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GO_ZERO_TIME, webhookSchema, type WebhookMessage } from '../../shared/alertmanager/schema.js';
import { convertAmpMessage } from '../../shared/amp/convert.js';
import { ampMessages } from '../../shared/amp/sns-event.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import { ensureTable } from '../../shared/store/table.js';
import { functionUrlEvent } from '../../scripts/lambda-local.js';
import { CASES } from '../fixtures/amp/record.js';
import {
  startFeishuPlatform,
  startSlackPlatform,
  startSnsPlatform,
  type FeishuPlatform,
  type SlackPlatform,
  type SnsPlatform,
} from '../integration/channels/platforms.js';
import { startSecretsManager, type SecretsManagerStandIn } from './assembly/aws-stand-ins.js';
import { chunkCoverage } from './assembly/chunks.js';
import { expectClaimedChunksRan } from './assembly/claims.js';
import { deployed, deployedFunction } from './assembly/deployed.js';
import { invokeDeployed, templateEnvironment } from './assembly/invoke.js';
import { startLoopback, type Loopback } from '../helpers/loopback.js';
import { expectSigV4 } from '../helpers/sigv4.js';

const TOKEN = 'lambda-amp-token-0123456789abcdef';

function recorded(name: string): SNSEvent {
  return JSON.parse(readFileSync(new URL(`../fixtures/amp/${name}.event.json`, import.meta.url), 'utf8')) as SNSEvent;
}

/** The webhook a self-run Alertmanager posts for the group of case `name`, with what the AMP body could carry. */
function equivalentWebhook(name: string): WebhookMessage {
  const full = webhookSchema.parse(CASES[name]!.webhook);
  const converted = convertAmpMessage(ampMessages(recorded(name))[0]!);
  // What arrived whole (a truncated message) and how many were left out.
  const group = {
    ...full,
    alerts: full.alerts.slice(0, converted.message.alerts.length),
    truncatedAlerts: converted.message.truncatedAlerts,
  };
  if (CASES[name]!.body === 'json') return group;
  const published = recorded(name).Records[0]!.Sns.Timestamp;
  return {
    ...group,
    // The default subject names the group labels; a cut message's subject is not read (`default-text-group.ts`).
    groupLabels: converted.truncated ? {} : full.groupLabels,
    externalURL: '',
    alerts: group.alerts.map((a) => ({
      ...a,
      startsAt: GO_ZERO_TIME,
      endsAt: a.status === 'resolved' ? published : GO_ZERO_TIME,
    })),
  };
}

describe('AMP SNS events on the deployed receiver', () => {
  const receiver = deployedFunction('ampTopicCreated', 'Receiver/Function');
  const env = templateEnvironment(receiver, deployed('ampTopicCreated').template.Resources);
  const coverage = chunkCoverage(receiver);
  let secrets: SecretsManagerStandIn;
  let db: LocalDynamoDb;
  let slack: SlackPlatform;
  let feishu: FeishuPlatform;
  let sns: SnsPlatform;
  let workspace: Loopback;
  let tables = 0;
  /** The workspace's path in its query endpoint (`/workspaces/ws-…`), served by the stand-in. */
  const workspacePath = new URL(env.PROMETHEUS_URL!).pathname;

  beforeAll(async () => {
    [db, slack, feishu, sns, workspace] = await Promise.all([
      startLocalDynamoDb('amp-0'),
      startSlackPlatform(),
      startFeishuPlatform(),
      startSnsPlatform(),
      // AMP's query API: every instant query answers an empty vector.
      startLoopback((r) =>
        r.path.startsWith(`${workspacePath}/api/v1/query`)
          ? {
              status: 200,
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ status: 'success', data: { resultType: 'vector', result: [] } }),
            }
          : r.path.startsWith(`${workspacePath}/alertmanager/api/v2/alerts`)
            ? { status: 200, headers: { 'content-type': 'application/json' }, body: '[]' }
            : { status: 404, body: 'not a query path of this workspace' },
      ),
    ]);
    secrets = await startSecretsManager({
      [env.SETTINGS_SECRET_ARN!]: {
        WEBHOOK_TOKEN: TOKEN,
        SLACK_WEBHOOK_URL: `${slack.url}/services/T0/B0/amp`,
        FEISHU_WEBHOOK_URL: `${feishu.url}/open-apis/bot/v2/hook/amp`,
      },
    });
  }, 120_000);
  afterAll(async () => {
    await Promise.allSettled([
      db?.close(),
      slack?.close(),
      feishu?.close(),
      sns?.close(),
      secrets?.close(),
      workspace?.close(),
    ]);
  });
  beforeEach(() => {
    for (const s of [slack.server, feishu.server, sns.server, workspace]) s.requests.length = 0;
  });

  /** Runs `events` through one cold-started bundle on a fresh table; returns results, stdout lines and what each platform received (raw bodies). */
  async function run(events: unknown[], extra: Record<string, string> = {}) {
    const table = `amp-${++tables}`;
    await ensureTable(db.client, table);
    const invocation = await invokeDeployed(receiver, events, {
      endpoints: { dynamodb: db.endpoint, sns: sns.endpoint, secretsManager: secrets.endpoint },
      // The workspace's query endpoint and alert manager, on loopback: the same paths, signed for the same region.
      env: {
        TABLE_NAME: table,
        NODE_V8_COVERAGE: coverage.dir,
        PROMETHEUS_URL: workspace.url + workspacePath,
        ALERTMANAGER_URL: `${workspace.url}${workspacePath}/alertmanager`,
        ...extra,
      },
      timeoutMs: 60_000,
    });
    const wire = [slack.server, feishu.server, sns.server].map((s) =>
      s.requests.splice(0).map((r) => r.body.toString('utf8')),
    );
    return { ...invocation, wire: { slack: wire[0]!, feishu: wire[1]!, sns: wire[2]! } };
  }

  const webhookEvent = (m: WebhookMessage) => functionUrlEvent(JSON.stringify(m), { authorization: `Bearer ${TOKEN}` });
  const emf = (lines: Record<string, unknown>[], name: string) =>
    lines.filter((l) => '_aws' in l && `llm_alert_pipeline_${name}` in l);

  it.each([
    ['json', 'the shipped JSON template'],
    ['default', "AMP's default text"],
  ] as const)(
    'a %s body (%s), firing → resolved → a group of six → a truncated storm, puts on the wire what the equivalent webhooks do',
    async (body, _what) => {
      const names = ['firing', 'resolved', 'several', 'truncated'].map((n) => `${n}-${body}`);
      // One cold start per side, the events in order, each side on a fresh table.
      const fromAmp = await run(names.map(recorded));
      expect(fromAmp.results).toEqual(
        names.map(() => ({ amp: [expect.objectContaining({ body: body === 'json' ? 'json' : 'text' })] })),
      );
      const fromWebhook = await run(names.map((n) => webhookEvent(equivalentWebhook(n))));
      expect(fromWebhook.results.map((r) => r.statusCode)).toEqual([200, 200, 200, 200]);
      expect(fromAmp.wire.slack).toHaveLength(4);
      expect(fromAmp.wire.feishu).toHaveLength(4);
      expect(fromAmp.wire.sns).toHaveLength(4);
      expect(fromAmp.wire).toEqual(fromWebhook.wire);
      expect(emf(fromAmp.lines, 'amp_messages_total').map((l) => l.body)).toEqual(
        names.map(() => (body === 'json' ? 'json' : 'text')),
      );
      const lost = equivalentWebhook(`truncated-${body}`).truncatedAlerts;
      expect(lost).toBeGreaterThan(0);
      expect(fromAmp.lines.find((l) => l.event === 'AMP message truncated')).toMatchObject({ level: 'warn', lost });
    },
    240_000,
  );

  it.each(['unparsable-custom', 'unparsable-not-utf8'])(
    '%s still reaches every channel, as raw text, and is counted',
    async (name) => {
      const event = recorded(name);
      const { results, lines, wire } = await run([event]);
      expect(results[0]).toMatchObject({ amp: [{ body: 'unparsed' }] });
      const raw = event.Records[0]!.Sns.Message;
      // Slack and Feishu get JSON (the text JSON-escaped), SNS a form-encoded Publish.
      const escaped = (text: string) => JSON.stringify(text).slice(1, -1);
      for (const bodies of [wire.slack, wire.feishu]) {
        expect(bodies).toHaveLength(1);
        expect(bodies[0]).toContain(escaped('Unparsed alert from AMP'));
        expect(bodies[0]).toContain(escaped(raw));
      }
      expect(wire.sns).toHaveLength(1);
      expect(new URLSearchParams(wire.sns[0]).get('Message')).toContain(raw);
      expect(emf(lines, 'amp_messages_total')[0]).toMatchObject({
        body: 'unparsed',
        llm_alert_pipeline_amp_messages_total: 1,
      });
      expect(lines.find((l) => l.event === 'AMP message not parsed')).toMatchObject({
        level: 'error',
        snsMessageId: event.Records[0]!.Sns.MessageId,
      });
    },
    120_000,
  );

  it('throws on a channel failure so Lambda retries; the retry sends only to that channel; a redelivery sends nothing', async () => {
    slack.server.reply({ status: 500, body: 'internal_error' });
    const event = recorded('firing-json');
    const { results, lines, wire } = await run([event, event, event], { DELIVERY_RETRIES: '0' });
    expect(results[0]).toMatchObject({
      errorType: 'AmpRetryError',
      errorMessage: expect.stringMatching(/channel slack failed/),
    });
    expect(lines.find((l) => l.event === 'AMP message not delivered')).toMatchObject({ level: 'error' });
    expect(results[1]).toMatchObject({ amp: [{ body: 'json', result: { ok: true, notified: 1 } }] });
    expect(Object.keys(results[1].amp[0].result.channels)).toEqual(['slack']);
    expect(results[2]).toMatchObject({ amp: [{ result: { ok: true, notified: 0, duplicates: 1 } }] });
    // First attempt: Feishu and SNS delivered, Slack refused; the retry: Slack alone.
    expect([wire.slack.length, wire.feishu.length, wire.sns.length]).toEqual([2, 1, 1]);
  }, 120_000);

  it('refuses an event that is not a well-formed SNS event, loudly, by throwing', async () => {
    const event = recorded('firing-json');
    (event.Records[0]!.Sns as { Timestamp?: string }).Timestamp = 'yesterday';
    const { results, lines, wire } = await run([event]);
    expect(results[0]).toMatchObject({
      errorType: 'Error',
      errorMessage: expect.stringMatching(/malformed SNS event: Records\.0\.Sns\.Timestamp/),
    });
    expect(lines.find((l) => l.event === 'SNS event refused')).toMatchObject({ level: 'error' });
    expect(wire.slack).toEqual([]);
  }, 60_000);

  it("queries the workspace with SigV4 as its role (service aps, the workspace's region): the AMP alert is enriched", async () => {
    expect(env.PROMETHEUS_URL).toBe(
      'https://aps-workspaces.eu-west-1.amazonaws.com/workspaces/ws-0123abcd-4567-89ef-0123-456789abcdef',
    );
    expect(env.PROMETHEUS_SIGV4_REGION).toBe('eu-west-1');
    expect(env.ALERTMANAGER_URL).toBe(`${env.PROMETHEUS_URL}/alertmanager`);
    expect(env.ALERTMANAGER_SIGV4_REGION).toBe('eu-west-1');
    const { results, wire } = await run([recorded('firing-json')]);
    expect(results).toEqual([{ amp: [expect.objectContaining({ body: 'json' })] }]);
    expect(workspace.requests.length).toBeGreaterThan(0);
    for (const request of workspace.requests) {
      expect(request.path.startsWith(`${workspacePath}/`), request.path).toBe(true);
      // The role session Lambda gives the function (invoke.ts).
      await expectSigV4(request, {
        service: 'aps',
        region: 'eu-west-1',
        accessKeyId: 'ASIAEXAMPLEEXAMPLE00',
        secretAccessKey: 'deployed-asset-test-secret-key',
        sessionToken: 'deployed-asset-test-session-token',
        port: Number(new URL(workspace.url).port),
      });
    }
    expect(wire.slack).toHaveLength(1);
    expect(wire.slack[0]).not.toMatch(/enrichment unavailable/i);
  }, 60_000);

  it('loaded and called the chunks it answers for (the SNS event reader, the SigV4 signer)', () => {
    expectClaimedChunksRan(coverage, 'lambda-amp.test.ts');
  });
});
