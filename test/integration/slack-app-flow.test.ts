/**
 * The Slack app end to end through the real app (`loadConfig` → `createDeps` → `createApp`, DynamoDB
 * on dynalite, the Slack Web API on loopback): firing → acknowledged by a signed
 * `POST /v1/slack/interactions` → resolved leaves ONE top-level Slack message, updated in place,
 * with a thread of follow-ups. A bad signature or an old timestamp is 401 and acknowledges nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../shared/http/app.js';
import { loadConfig } from '../../shared/runtime/config.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import { createLogger } from '../../shared/core/logger.js';
import { createDeps } from '../../shared/runtime/deps.js';
import { fixture } from '../helpers/fixtures.js';
import { startLoopback, type Loopback } from '../helpers/loopback.js';
import { pollUntil } from '../helpers/processes.js';
import { SLACK_CHANNEL_ID, startFakeSlackApi, type FakeSlackApi } from '../helpers/slack-api.js';
import {
  acknowledgeToken,
  clickBody,
  postClick,
  postWebhook,
  signatureHeaders,
  slackAppSettings as settings,
  SIGNING_SECRET,
  WEBHOOK_TOKEN,
} from '../helpers/slack-app.js';

const BOT_TOKEN = 'xoxb-1111-2222-FLOWtokenXYZ';

/** The settings both flows share: the Slack app with interactivity, acknowledgement links, the webhook token. */
const slackAppSettings = (tableName: string, apiUrl: string) => settings(tableName, apiUrl, BOT_TOKEN);
describe('Slack app: one message per alert group, updated in place', () => {
  let db: LocalDynamoDb;
  let slack: FakeSlackApi;
  let app: ReturnType<typeof createApp>;
  const logs: string[] = [];

  beforeAll(async () => {
    db = await startLocalDynamoDb('slack-app-flow');
    slack = await startFakeSlackApi();
    const config = loadConfig({
      ...slackAppSettings(db.tableName, slack.url),
      DELIVERY_RETRIES: '0',
    });
    const logger = createLogger('info', (line) => void logs.push(line));
    app = createApp(config, createDeps(config, { dynamodb: db.client }, logger));
  });
  afterAll(async () => {
    await slack.close();
    await db.close();
  });

  const webhook = (body: unknown) => postWebhook(app, body);
  const audit = async (fingerprint: string) =>
    (await (
      await app.request(`/v1/alerts/${fingerprint}`, { headers: { authorization: `Bearer ${WEBHOOK_TOKEN}` } })
    ).json()) as { record?: { acknowledgement?: { by: string; channel: string } } };
  const click = (token: string, headers: (body: string) => Record<string, string>) => {
    const body = clickBody(token);
    return postClick(app, body, headers(body));
  };
  const signed =
    (timestamp: number, secret = SIGNING_SECRET) =>
    (body: string) =>
      signatureHeaders(body, timestamp, secret);

  it('firing → acknowledged via the signed interaction → resolved', async () => {
    const firing = fixture('firing-kv-cache-critical');
    const fingerprint = firing.alerts[0]!.fingerprint;
    expect((await webhook(firing)).status).toBe(200);
    const [first] = slack.calls();
    expect(first).toMatchObject({
      method: 'chat.postMessage',
      authorization: `Bearer ${BOT_TOKEN}`,
      form: { channel: 'C0ALERTS01' },
    });
    const button = (
      first!.blocks.find((b) => b.type === 'actions') as unknown as {
        elements: { action_id: string; value?: string }[];
      }
    ).elements.find((e) => e.action_id === 'acknowledge')!;
    const now = Math.floor(Date.now() / 1000);

    // Refused: wrong secret, old timestamp, no signature. Nothing acknowledged, nothing sent.
    expect((await click(button.value!, signed(now, 'not-the-signing-secret-000'))).status).toBe(401);
    expect((await click(button.value!, signed(now - 301))).status).toBe(401);
    expect((await click(button.value!, () => ({}))).status).toBe(401);
    expect((await audit(fingerprint)).record?.acknowledgement).toBeUndefined();
    expect(slack.calls()).toHaveLength(1);

    const answer = await click(button.value!, signed(now));
    expect(answer.status).toBe(200);
    expect((await audit(fingerprint)).record?.acknowledgement).toMatchObject({ by: 'alice', channel: 'slack' });

    const resolved = {
      ...firing,
      status: 'resolved',
      alerts: firing.alerts.map((a) => ({ ...a, status: 'resolved', endsAt: '2026-11-30T12:30:00Z' })),
    };
    expect((await webhook(resolved)).status).toBe(200);

    const calls = slack.calls();
    const topLevel = calls.filter((c) => c.method === 'chat.postMessage' && !c.form.thread_ts);
    expect(topLevel).toHaveLength(1);
    const ts = calls[1]!.form.ts;
    expect(calls.map((c) => `${c.method} ${c.form.ts ?? ''}|${c.form.thread_ts ?? ''}`)).toEqual([
      'chat.postMessage |',
      `chat.update ${ts}|`,
      `chat.postMessage |${ts}`,
      `chat.update ${ts}|`,
      `chat.postMessage |${ts}`,
    ]);
    for (const c of calls.slice(1)) expect(c.form.channel).toBe(SLACK_CHANNEL_ID);
    const state = (i: number) => (calls[i]!.blocks[1] as unknown as { elements: { text: string }[] }).elements[0]!.text;
    expect(state(1)).toMatch(
      /^🔥 \*Firing\* \(1 alert\) · 👀 Acknowledged by alice at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/,
    );
    expect(state(3)).toMatch(/^✅ \*Resolved\* at 2026-11-30 12:30:00 UTC · 👀 Acknowledged by alice at /);
    expect(calls[2]!.form.text).toMatch(/ACKNOWLEDGED/);
    expect(calls[4]!.form.text).toMatch(/RESOLVED/);
    // Secrets stay out of the logs.
    expect(logs.join('\n')).not.toContain(BOT_TOKEN);
    expect(logs.join('\n')).not.toContain(SIGNING_SECRET);
  });

  it('a payload that is not an Acknowledge click is answered 200 and changes nothing', async () => {
    const before = slack.calls().length;
    const body = new URLSearchParams({
      payload: JSON.stringify({
        type: 'block_actions',
        user: { id: 'U1' },
        actions: [{ action_id: 'acknowledge_page' }],
      }),
    }).toString();
    const res = await app.request('/v1/slack/interactions', {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...signed(Math.floor(Date.now() / 1000))(body) },
    });
    expect(res.status).toBe(200);
    expect(slack.calls()).toHaveLength(before);
  });

  it('a signed body without a payload is 400, logged as an error', async () => {
    const body = 'token=x';
    const res = await app.request('/v1/slack/interactions', {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...signed(Math.floor(Date.now() / 1000))(body) },
    });
    expect(res.status).toBe(400);
    expect(logs.some((l) => l.includes('slack interaction not understood') && l.includes('"level":"error"'))).toBe(
      true,
    );
  });
});

describe('Slack app: follow-ups after answering, and the escalation in the thread', () => {
  let db: LocalDynamoDb;
  let slack: FakeSlackApi;
  let escalationTarget: Loopback;
  let app: ReturnType<typeof createApp>;
  let deps: ReturnType<typeof createDeps>;

  beforeAll(async () => {
    db = await startLocalDynamoDb('slack-app-flow-2');
    slack = await startFakeSlackApi();
    escalationTarget = await startLoopback();
    const config = loadConfig({
      ...slackAppSettings(db.tableName, slack.url),
      ESCALATION_SLACK_WEBHOOK_URL: `${escalationTarget.url}/services/T0/B0/escalation`,
      ESCALATION_DELAY_SECONDS: '0.2',
    });
    deps = createDeps(
      config,
      { dynamodb: db.client, workAfterAnswer: true },
      createLogger('error', () => undefined),
    );
    app = createApp(config, deps);
  });
  afterAll(async () => {
    await escalationTarget.close();
    await slack.close();
    await db.close();
  });

  it('an unacknowledged critical alert escalates: the target gets it, the Slack message shows it and its thread says so', async () => {
    const body = fixture('firing-kv-cache-critical');
    body.groupKey = `${body.groupKey}#escalation`;
    expect((await postWebhook(app, body)).status).toBe(200);
    await pollUntil(
      async () => (slack.calls().length >= 3 ? true : undefined),
      () =>
        `Slack got ${slack
          .calls()
          .map((c) => c.method)
          .join(', ')}`,
      { deadlineMs: 15_000, intervalMs: 50 },
    );
    const calls = slack.calls();
    const ts = calls[1]!.form.ts;
    expect(calls.map((c) => `${c.method} ${c.form.ts ?? ''}|${c.form.thread_ts ?? ''}`)).toEqual([
      'chat.postMessage |',
      `chat.update ${ts}|`,
      `chat.postMessage |${ts}`,
    ]);
    expect((calls[1]!.blocks[1] as unknown as { elements: { text: string }[] }).elements[0]!.text).toMatch(
      /^🔥 \*Firing\* \(1 alert\) · 📣 Escalated at /,
    );
    expect(calls[2]!.form.text).toMatch(/^🚨 UNACKNOWLEDGED/);
    expect(escalationTarget.requests).toHaveLength(1);
  });

  it('with work after answering (npm start), the click is answered before the follow-ups run', async () => {
    const tasks: (() => Promise<void>)[] = [];
    deps.slackInteractions!.defer = (task) => void tasks.push(task);
    const body = fixture('firing-gpu-memory-leak');
    expect((await postWebhook(app, body)).status).toBe(200);
    const first = slack.calls().at(-1)!;
    const before = slack.calls().length;
    const answer = await postClick(app, clickBody(acknowledgeToken(first), 'bob'));
    expect(answer.status).toBe(200);
    expect(tasks).toHaveLength(1);
    expect(slack.calls()).toHaveLength(before);
    await tasks[0]!();
    expect(
      slack
        .calls()
        .slice(before)
        .map((c) => c.method),
    ).toEqual(['chat.update', 'chat.postMessage']);
    expect(slack.calls().at(-1)!.form.text).toMatch(/Acknowledged by \*bob\*/);
  });
});
