/**
 * A storm digest in the Slack app: its one Acknowledge button (a signed `POST /v1/slack/interactions`)
 * acknowledges every alert of the digest's stored alert set, not only the 50 its token carries (after the
 * answer, in this process, as under `npm start`).
 * Real app (`loadConfig` → `createDeps` → `createApp`) on dynalite, the Slack Web API on loopback.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../shared/http/app.js';
import { loadConfig } from '../../shared/runtime/config.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import { silentLogger } from '../../shared/core/logger.js';
import { createDeps } from '../../shared/runtime/deps.js';
import { startFakeSlackApi, type FakeSlackApi } from '../helpers/slack-api.js';
import {
  acknowledgeToken,
  clickBody,
  postClick,
  postWebhook,
  slackAppSettings,
  WEBHOOK_TOKEN,
} from '../helpers/slack-app.js';
import { stormWebhook } from './storm-webhook.js';
import { pollUntil } from '../helpers/processes.js';

let db: LocalDynamoDb;
let slack: FakeSlackApi;
let app: ReturnType<typeof createApp>;
beforeAll(async () => {
  db = await startLocalDynamoDb('slack-app-storm-ack');
  slack = await startFakeSlackApi();
  const config = loadConfig({
    ...slackAppSettings(db.tableName, slack.url, 'xoxb-1111-2222-STORMtokenXYZ'),
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
    expect((await postWebhook(app, storm)).status).toBe(200);
    const [digest] = slack.calls();
    const click = await postClick(app, clickBody(acknowledgeToken(digest!), 'bob'));
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
