/**
 * The Feishu app in the deployed receiver: the Lambda asset as `cdk deploy` uploads it, cold-started in
 * a plain Node process with dynalite as DynamoDB and the loopback Open API stand-in. A webhook sends one
 * @-mentioning card; a cold start later, a click sent to `POST /v1/feishu/callback` as Feishu sends it
 * (encrypted, signed) is verified by the callback route, which lives in the lazily loaded chunk
 * (`shared/http/off-webhook.ts`), acknowledges, answers with the updated card, and (Lambda awaits its
 * follow-ups) updates the card in place and replies in its thread. A forged click is 401.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleReceiver, functionUrlEvent, invokeBundle, type ReceiverBundle } from '../../scripts/lambda-local.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import {
  cardActionPayload,
  feishuCallbackRequest,
  startFakeFeishuApi,
  type FakeFeishuApi,
} from '../helpers/feishu-api.js';
import { fixtureText } from '../helpers/fixtures.js';

const APP_ID = 'cli_a5fb0ae6a4fake03';
const APP_SECRET = 'lambda-feishu-app-secret-0123456789';
const ENCRYPT_KEY = 'lambda-feishu-encrypt-key-0123';
const VERIFICATION_TOKEN = 'lambda-verification-token';
const CHAT = 'oc_5ad11d72b830411d72b836c2';
const ONCALL = 'ou_7d8a6e6df7621556ce0d21922b676706';

describe('the Feishu app in the Lambda asset', () => {
  let bundle: ReceiverBundle;
  let db: LocalDynamoDb;
  let feishu: FakeFeishuApi;

  beforeAll(async () => {
    bundle = bundleReceiver();
    db = await startLocalDynamoDb('lambda-feishu');
    feishu = await startFakeFeishuApi({ appId: APP_ID, appSecret: APP_SECRET, chats: [CHAT] });
  }, 120_000);
  afterAll(async () => {
    bundle?.dispose();
    await Promise.allSettled([feishu?.close(), db?.close()]);
  });

  const env = () => ({
    AWS_REGION: 'eu-west-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    AWS_ENDPOINT_URL_DYNAMODB: db.endpoint,
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    TABLE_NAME: db.tableName,
    ALLOW_UNAUTHENTICATED: 'true',
    PUBLIC_URL: 'https://alerts.example.com',
    ACK_SECRET: 'lambda-feishu-ack-secret-0123456789abcdef',
    FEISHU_APP_ID: APP_ID,
    FEISHU_APP_SECRET: APP_SECRET,
    FEISHU_CHAT_ID: CHAT,
    FEISHU_API_URL: feishu.url,
    FEISHU_ENCRYPT_KEY: ENCRYPT_KEY,
    FEISHU_VERIFICATION_TOKEN: VERIFICATION_TOKEN,
  });

  it('keeps the callback route out of the main bundle (a chunk loaded on first use)', () => {
    const main = readFileSync(bundle.path, 'utf8');
    expect(main).not.toContain('feishu callback refused');
  });

  it('sends the card, then acknowledges a verified click and updates the card in place', async () => {
    const sent = await invokeBundle(bundle.path, env(), [functionUrlEvent(fixtureText('firing-kv-cache-critical'))]);
    expect(sent.results[0].statusCode).toBe(200);
    expect(feishu.messages).toHaveLength(1);
    const message = feishu.messages[0]!;
    const button = (message.card as { elements: { tag: string; actions?: any[] }[] }).elements
      .filter((e) => e.tag === 'action')
      .flatMap((e) => e.actions ?? [])
      .find((b) => b.behaviors?.[0]?.type === 'callback');
    const click = (eventId: string, signWith?: string) => {
      const payload = cardActionPayload({
        eventId,
        appId: APP_ID,
        verificationToken: VERIFICATION_TOKEN,
        openId: ONCALL,
        messageId: message.messageId,
        chatId: CHAT,
        value: button.behaviors[0].value,
      });
      const request = feishuCallbackRequest(payload, ENCRYPT_KEY, {
        timestampSeconds: Math.floor(Date.now() / 1000),
        signWith,
      });
      return functionUrlEvent(request.body, request.headers, '/v1/feishu/callback');
    };

    const { results } = await invokeBundle(bundle.path, env(), [
      click('ev-lambda-forged', 'not-the-encrypt-key-0000'),
      click('ev-lambda-1'),
    ]);
    expect(results[0].statusCode).toBe(401);
    expect(results[1].statusCode).toBe(200);
    const answer = JSON.parse(results[1].body) as { toast: { type: string }; card: { type: string; data: unknown } };
    expect(answer.toast.type).toBe('success');
    expect(JSON.stringify(answer.card.data)).toContain(`由 ${ONCALL}`);
    // Lambda awaits the follow-ups: the card is updated in place and answered in its thread, no new card.
    expect(feishu.messages).toHaveLength(1);
    expect(message.updates.length).toBeGreaterThanOrEqual(1);
    expect(message.replies).toEqual([expect.objectContaining({ inThread: true })]);
    expect(feishu.violations).toEqual([]);
  }, 120_000);
});
