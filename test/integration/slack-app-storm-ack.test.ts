/**
 * A storm digest in the Slack app: its one Acknowledge button (a signed `POST /v1/slack/interactions`)
 * acknowledges every alert of the digest's stored alert set, not only the 50 its token carries (after the
 * answer, in this process, as under `npm start`).
 * Real app (`loadConfig` → `createDeps` → `createApp`) on dynalite, the Slack Web API on loopback.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../shared/http/app.js';
import { slackSignature } from '../../shared/channels/slack/signature.js';
import { loadConfig } from '../../shared/runtime/config.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import { silentLogger } from '../../shared/core/logger.js';
import { createDeps } from '../../shared/runtime/deps.js';
import { Secret } from '../../shared/core/secret.js';
import { startFakeSlackApi, type FakeSlackApi } from '../helpers/slack-api.js';
import { stormWebhook } from './storm-webhook.js';
import { pollUntil } from '../helpers/processes.js';

const WEBHOOK_TOKEN = 'test-token-0123456789abcdef';
const SIGNING_SECRET = 'slack-signing-secret-0123456789';

let db: LocalDynamoDb;
let slack: FakeSlackApi;
let app: ReturnType<typeof createApp>;
beforeAll(async () => {
  db = await startLocalDynamoDb('slack-app-storm-ack');
  slack = await startFakeSlackApi();
  const config = loadConfig({
    WEBHOOK_TOKEN,
    PUBLIC_URL: 'https://alerts.example.com',
    ACK_SECRET: 'ack-secret-for-tests-0123456789abcdef',
    TABLE_NAME: db.tableName,
    SLACK_BOT_TOKEN: 'xoxb-1111-2222-STORMtokenXYZ',
    SLACK_CHANNEL: 'C0ALERTS01',
    SLACK_SIGNING_SECRET: SIGNING_SECRET,
    SLACK_API_URL: slack.url,
    DELIVERY_RETRIES: '0',
  });
  app = createApp(config, createDeps(config, { dynamodb: db.client }, silentLogger));
});
afterAll(async () => {
  await slack.close();
  await db.close();
});

describe('Slack app: a storm digest acknowledged with one click', () => {
  it('acknowledges all 60 alerts of the digest as the Slack user', async () => {
    const storm = stormWebhook(60);
    const res = await app.request('/v1/alertmanager', {
      method: 'POST',
      body: JSON.stringify(storm),
      headers: { 'content-type': 'application/json', authorization: `Bearer ${WEBHOOK_TOKEN}` },
    });
    expect(res.status).toBe(200);
    const [digest] = slack.calls();
    const actions = digest!.blocks.find((b) => b.type === 'actions') as unknown as {
      elements: { action_id: string; value?: string }[];
    };
    const token = actions.elements.find((e) => e.action_id === 'acknowledge')!.value!;
    const payload = {
      type: 'block_actions',
      user: { id: 'U0BOB', username: 'bob', name: 'bob' },
      actions: [{ action_id: 'acknowledge', block_id: 'b', value: token, type: 'button' }],
    };
    const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
    const timestamp = String(Math.floor(Date.now() / 1000));
    const click = await app.request('/v1/slack/interactions', {
      method: 'POST',
      body,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-slack-request-timestamp': timestamp,
        'x-slack-signature': slackSignature(new Secret(SIGNING_SECRET), timestamp, body),
      },
    });
    expect(click.status).toBe(200);
    const acked = () =>
      Promise.all(
        storm.alerts.map(async (a) => {
          const audit = (await (
            await app.request(`/v1/alerts/${a.fingerprint}`, { headers: { authorization: `Bearer ${WEBHOOK_TOKEN}` } })
          ).json()) as { record?: { acknowledgement?: { by: string } } };
          return audit.record?.acknowledgement?.by;
        }),
      );
    // Under npm start the set is acknowledged in this process right after the answer.
    const all = await pollUntil(
      async () => {
        const by = await acked();
        return by.every((b) => b === 'bob') ? by : undefined;
      },
      () => 'all 60 alerts acknowledged by bob',
      { deadlineMs: 60_000 },
    );
    expect(all).toHaveLength(60);
  }, 120_000);
});
