/**
 * AMP through SNS, end to end on the deployed code: functions/lambda.ts bundled as `cdk deploy` does
 * (scripts/lambda-local.ts, what `npm run lambda:invoke` runs), invoked with the recorded Lambda SNS
 * events of test/fixtures/amp, against dynalite and loopback Slack, Feishu and SNS stand-ins that
 * enforce the platforms' limits. Each event must put on the wire exactly what the equivalent
 * Alertmanager webhook puts there (the same group through the Function URL, into a fresh table): for
 * the default text, the webhook less what the text cannot carry (start time, group labels, external URL).
 * An unparsable body still reaches every channel, and is counted; a channel failure makes the
 * handler throw (Lambda retries the event) and the retry sends only what is missing.
 */
import { readFileSync } from 'node:fs';
import type { SNSEvent } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GO_ZERO_TIME, webhookSchema, type WebhookMessage } from '../../shared/alertmanager/schema.js';
import { convertAmpMessage } from '../../shared/amp/convert.js';
import { ampMessages } from '../../shared/amp/sns-event.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import { ensureTable } from '../../shared/store/table.js';
import { bundleReceiver, functionUrlEvent, invokeBundle, type ReceiverBundle } from '../../scripts/lambda-local.js';
import { CASES } from '../fixtures/amp/record.js';
import { startFeishuPlatform, startSlackPlatform, startSnsPlatform, type FeishuPlatform, type SlackPlatform, type SnsPlatform } from '../integration/channels/platforms.js';

const TOKEN = 'lambda-amp-token-0123456789abcdef';
const OUT_TOPIC = 'arn:aws:sns:eu-west-1:123456789012:llm-fleet-alerts';

function recorded(name: string): SNSEvent {
  return JSON.parse(readFileSync(new URL(`../fixtures/amp/${name}.event.json`, import.meta.url), 'utf8')) as SNSEvent;
}

/** The webhook a self-run Alertmanager posts for the group of case `name`, with what the AMP body could carry. */
function equivalentWebhook(name: string): WebhookMessage {
  const full = webhookSchema.parse(CASES[name]!.webhook);
  const converted = convertAmpMessage(ampMessages(recorded(name))[0]!);
  // What arrived whole (a truncated message) and how many were left out.
  const group = { ...full, alerts: full.alerts.slice(0, converted.message.alerts.length), truncatedAlerts: converted.message.truncatedAlerts };
  if (CASES[name]!.body === 'json') return group;
  const published = recorded(name).Records[0]!.Sns.Timestamp;
  return { ...group, groupLabels: {}, externalURL: '', alerts: group.alerts.map((a) => ({ ...a, startsAt: GO_ZERO_TIME, endsAt: a.status === 'resolved' ? published : GO_ZERO_TIME })) };
}

describe('AMP SNS events on the bundled Lambda', () => {
  let bundle: ReceiverBundle;
  let db: LocalDynamoDb;
  let slack: SlackPlatform;
  let feishu: FeishuPlatform;
  let sns: SnsPlatform;
  let tables = 0;

  beforeAll(async () => {
    bundle = bundleReceiver();
    [db, slack, feishu, sns] = await Promise.all([startLocalDynamoDb('amp-0'), startSlackPlatform(), startFeishuPlatform(), startSnsPlatform()]);
  }, 120_000);
  afterAll(async () => {
    bundle?.dispose();
    await Promise.allSettled([db?.close(), slack?.close(), feishu?.close(), sns?.close()]);
  });
  beforeEach(() => {
    for (const s of [slack.server, feishu.server, sns.server]) s.requests.length = 0;
  });

  /** Runs `events` through one cold-started bundle on a fresh table; returns results, stdout lines and what each platform received (raw bodies). */
  async function run(events: unknown[], env: Record<string, string> = {}) {
    const table = `amp-${++tables}`;
    await ensureTable(db.client, table);
    const invocation = await invokeBundle(
      bundle.path,
      {
        AWS_REGION: 'eu-west-1',
        AWS_ACCESS_KEY_ID: 'local',
        AWS_SECRET_ACCESS_KEY: 'local',
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        AWS_ENDPOINT_URL_DYNAMODB: db.endpoint,
        AWS_ENDPOINT_URL_SNS: sns.endpoint,
        TABLE_NAME: table,
        AWS_LAMBDA_FUNCTION_NAME: 'receiver',
        WEBHOOK_TOKEN: TOKEN,
        SLACK_WEBHOOK_URL: `${slack.url}/services/T0/B0/amp`,
        FEISHU_WEBHOOK_URL: `${feishu.url}/open-apis/bot/v2/hook/amp`,
        SNS_TOPIC_ARN: OUT_TOPIC,
        ...env,
      },
      events,
      { timeoutMs: 60_000 },
    );
    const wire = [slack.server, feishu.server, sns.server].map((s) => s.requests.splice(0).map((r) => r.body.toString('utf8')));
    return { ...invocation, wire: { slack: wire[0]!, feishu: wire[1]!, sns: wire[2]! } };
  }

  const webhookEvent = (m: WebhookMessage) => functionUrlEvent(JSON.stringify(m), { authorization: `Bearer ${TOKEN}` });
  const emf = (lines: Record<string, unknown>[], name: string) => lines.filter((l) => '_aws' in l && `llm_alert_pipeline_${name}` in l);

  it.each([
    ['json', 'the shipped JSON template'],
    ['default', "AMP's default text"],
  ] as const)(
    'a %s body (%s), firing → resolved → a group of six → a truncated storm, puts on the wire what the equivalent webhooks do',
    async (body, _what) => {
      const names = ['firing', 'resolved', 'several', 'truncated'].map((n) => `${n}-${body}`);
      // One cold start per side, the events in order, each side on a fresh table.
      const fromAmp = await run(names.map(recorded));
      expect(fromAmp.results).toEqual(names.map(() => ({ amp: [expect.objectContaining({ body: body === 'json' ? 'json' : 'text' })] })));
      const fromWebhook = await run(names.map((n) => webhookEvent(equivalentWebhook(n))));
      expect(fromWebhook.results.map((r) => r.statusCode)).toEqual([200, 200, 200, 200]);
      expect(fromAmp.wire.slack).toHaveLength(4);
      expect(fromAmp.wire.feishu).toHaveLength(4);
      expect(fromAmp.wire.sns).toHaveLength(4);
      expect(fromAmp.wire).toEqual(fromWebhook.wire);
      expect(emf(fromAmp.lines, 'amp_messages_total').map((l) => l.body)).toEqual(names.map(() => (body === 'json' ? 'json' : 'text')));
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
      expect(emf(lines, 'amp_messages_total')[0]).toMatchObject({ body: 'unparsed', llm_alert_pipeline_amp_messages_total: 1 });
      expect(lines.find((l) => l.event === 'AMP message not parsed')).toMatchObject({ level: 'error', snsMessageId: event.Records[0]!.Sns.MessageId });
    },
    120_000,
  );

  it('throws on a channel failure so Lambda retries; the retry sends only to that channel; a redelivery sends nothing', async () => {
    slack.server.reply({ status: 500, body: 'internal_error' });
    const event = recorded('firing-json');
    const { results, lines, wire } = await run([event, event, event], { DELIVERY_RETRIES: '0' });
    expect(results[0]).toMatchObject({ errorType: 'AmpRetryError', errorMessage: expect.stringMatching(/channel slack failed/) });
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
    expect(results[0]).toMatchObject({ errorType: 'Error', errorMessage: expect.stringMatching(/malformed SNS event: Records\.0\.Sns\.Timestamp/) });
    expect(lines.find((l) => l.event === 'SNS event refused')).toMatchObject({ level: 'error' });
    expect(wire.slack).toEqual([]);
  }, 60_000);
});
