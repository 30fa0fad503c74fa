/**
 * The Feishu app end to end through the real app (`loadConfig` → `createDeps` → `createApp`, DynamoDB on
 * dynalite, the Feishu Open API on a loopback stand-in that checks every request's wire format and token):
 * firing → one card in the chat, @-mentioning the configured people (an email looked up through the
 * contact API) → a click on its Acknowledge button, sent signed and encrypted as Feishu sends it,
 * acknowledges and is answered with a toast and the updated card → the card is updated in place and
 * answered in its thread → resolve updates the same card and replies in its thread. A forged, replayed,
 * stale or unencrypted callback is 401 and changes nothing. A send whose answer was lost is retried with
 * the same `uuid`: one card. An unacknowledged critical alert escalates the card with Feishu's urgent API.
 */
import { createDecipheriv, createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../shared/http/app.js';
import { loadConfig } from '../../shared/runtime/config.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import { createLogger } from '../../shared/core/logger.js';
import { createDeps } from '../../shared/runtime/deps.js';
import { fixture } from '../helpers/fixtures.js';
import { pollUntil } from '../helpers/processes.js';
import { startLoopback, type Loopback } from '../helpers/loopback.js';
import {
  cardActionPayload,
  feishuCallbackRequest,
  signedHeaders,
  startFakeFeishuApi,
  type FakeFeishuApi,
} from '../helpers/feishu-api.js';

const WEBHOOK_TOKEN = 'test-token-0123456789abcdef';
const APP_ID = 'cli_a5fb0ae6a4fake01';
const APP_SECRET = 'feishu-app-secret-0123456789abcdef';
const ENCRYPT_KEY = 'feishu-encrypt-key-0123456789';
const VERIFICATION_TOKEN = 'feishu-verification-token-01';
const CHAT = 'oc_5ad11d72b830411d72b836c2';
const ONCALL = 'ou_7d8a6e6df7621556ce0d21922b676706';
const ZHANG = { email: 'zhang.san@example.com', openId: 'ou_155184d1e73cbfb8973e5a9e698e74f2', name: 'Zhang San' };
const LI = { email: 'li.si@example.com', openId: 'ou_919112245678741d29069abcdef02345', name: 'Li Si' };

type Card = { elements: { tag: string; content?: string; elements?: { content: string }[]; actions?: any[] }[] };
const stateOf = (card: Card) => card.elements.find((e) => e.tag === 'note')?.elements?.[0]?.content ?? '';
const callbackButtons = (card: Card) =>
  card.elements
    .filter((e) => e.tag === 'action')
    .flatMap((e) => e.actions ?? [])
    .filter((b) => b.behaviors?.some((x: { type: string }) => x.type === 'callback'));

describe('Feishu app: one card per alert group, acknowledged in Feishu, updated in place', () => {
  let db: LocalDynamoDb;
  let feishu: FakeFeishuApi;
  let target: Loopback;
  let app: ReturnType<typeof createApp>;
  let dir: string;
  const logs: string[] = [];

  beforeAll(async () => {
    db = await startLocalDynamoDb('feishu-app-flow');
    feishu = await startFakeFeishuApi({
      appId: APP_ID,
      appSecret: APP_SECRET,
      chats: [CHAT],
      users: {
        [ZHANG.email]: { openId: ZHANG.openId, name: ZHANG.name },
        [LI.email]: { openId: LI.openId, name: LI.name },
      },
    });
    target = await startLoopback();
    dir = mkdtempSync(`${tmpdir()}/feishu-routing-`);
    writeFileSync(
      `${dir}/routing.yml`,
      [
        'channels:',
        '  oncall-feishu:',
        '    type: feishu-app',
        `    chatId: ${CHAT}`,
        `    mention: [${ONCALL}, ${ZHANG.email}]`,
        '    urgent: app',
        'routes:',
        '  - matchers: [\'severity="critical"\']',
        '    channels: [oncall-feishu]',
        `    mention: [${LI.email}]`,
        'default:',
        '  channels: [oncall-feishu]',
      ].join('\n'),
    );
    const config = loadConfig({
      WEBHOOK_TOKEN,
      PUBLIC_URL: 'https://alerts.example.com',
      ACK_SECRET: 'ack-secret-for-tests-0123456789abcdef',
      TABLE_NAME: db.tableName,
      FEISHU_APP_ID: APP_ID,
      FEISHU_APP_SECRET: APP_SECRET,
      FEISHU_API_URL: feishu.url,
      FEISHU_ENCRYPT_KEY: ENCRYPT_KEY,
      FEISHU_VERIFICATION_TOKEN: VERIFICATION_TOKEN,
      ROUTING_FILE: `${dir}/routing.yml`,
      ESCALATION_SLACK_WEBHOOK_URL: `${target.url}/services/T0/B0/escalation`,
      ESCALATION_DELAY_SECONDS: '600',
      DELIVERY_TIMEOUT_MS: '1500',
      DELIVERY_RETRIES: '2',
    });
    const logger = createLogger('info', (line) => void logs.push(line));
    app = createApp(config, createDeps(config, { dynamodb: db.client, workAfterAnswer: true }, logger));
  });
  afterAll(async () => {
    await Promise.allSettled([feishu?.close(), target?.close(), db?.close()]);
    rmSync(dir, { recursive: true, force: true });
  });

  const webhook = (body: unknown) =>
    app.request('/v1/alertmanager', {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json', authorization: `Bearer ${WEBHOOK_TOKEN}` },
    });
  const audit = async (fingerprint: string) =>
    (await (
      await app.request(`/v1/alerts/${fingerprint}`, { headers: { authorization: `Bearer ${WEBHOOK_TOKEN}` } })
    ).json()) as { record?: { acknowledgement?: { by: string; channel: string } } };
  const callback = (request: { body: string; headers: Record<string, string> }) =>
    app.request('/v1/feishu/callback', { method: 'POST', body: request.body, headers: request.headers });
  const now = () => Math.floor(Date.now() / 1000);

  it('firing → one @-mentioning card; a verified click acknowledges; resolve updates the same card', async () => {
    const firing = fixture('firing-kv-cache-critical');
    const fingerprint = firing.alerts[0]!.fingerprint;
    expect((await webhook(firing)).status).toBe(200);
    expect(feishu.messages).toHaveLength(1);
    const [message] = feishu.messages;
    expect(message!.chatId).toBe(CHAT);
    const card = message!.card as Card;
    // Mentions from configuration: the instance's (the open_id as given, the email through the contact
    // API), then the matching route's.
    expect(card.elements.find((e) => e.tag === 'markdown')?.content).toBe(
      `<at id=${ONCALL}></at> <at id=${ZHANG.openId}></at> <at id=${LI.openId}></at>`,
    );
    expect(stateOf(card)).toBe('🔥 告警中（1 条）');
    const buttons = callbackButtons(card);
    expect(buttons.map((b) => b.text.content)).toEqual(['认领']);
    const value = buttons[0].behaviors[0].value as { action: string; token: string };
    expect(value.action).toBe('acknowledge');

    const click = (eventId: string, extra: { timestampSeconds?: number; signWith?: string } = {}) =>
      feishuCallbackRequest(
        cardActionPayload({
          eventId,
          appId: APP_ID,
          verificationToken: VERIFICATION_TOKEN,
          openId: ZHANG.openId,
          messageId: message!.messageId,
          chatId: CHAT,
          value,
        }),
        ENCRYPT_KEY,
        { timestampSeconds: extra.timestampSeconds ?? now(), signWith: extra.signWith },
      );

    // Refused, 401, nothing changed: forged (another key), stale, unencrypted, unsigned, wrong token.
    expect((await callback(click('ev-forged', { signWith: 'not-the-encrypt-key-0000' }))).status).toBe(401);
    expect((await callback(click('ev-stale', { timestampSeconds: now() - 301 }))).status).toBe(401);
    const plain = JSON.stringify(
      cardActionPayload({
        eventId: 'ev-plain',
        appId: APP_ID,
        verificationToken: VERIFICATION_TOKEN,
        openId: ZHANG.openId,
        messageId: message!.messageId,
        chatId: CHAT,
        value,
      }),
    );
    expect(
      (await callback({ body: plain, headers: signedHeaders(plain, ENCRYPT_KEY, { timestampSeconds: now() }) })).status,
    ).toBe(401);
    const unsigned = click('ev-unsigned');
    expect((await callback({ body: unsigned.body, headers: { 'content-type': 'application/json' } })).status).toBe(401);
    expect((await audit(fingerprint)).record?.acknowledgement).toBeUndefined();
    expect(message!.updates).toEqual([]);

    const first = click('ev-1');
    const answer = await callback(first);
    expect(answer.status).toBe(200);
    const answered = (await answer.json()) as {
      toast: { type: string; content: string };
      card: { type: string; data: Card };
    };
    expect(answered.toast).toMatchObject({ type: 'success', content: `已认领（${ZHANG.name}）` });
    expect(answered.card.type).toBe('raw');
    expect(stateOf(answered.card.data)).toMatch(new RegExp(`^🔥 告警中（1 条） · 👀 由 ${ZHANG.name} 于 .+ 认领$`));
    expect(callbackButtons(answered.card.data)).toEqual([]);
    expect((await audit(fingerprint)).record?.acknowledgement).toMatchObject({
      by: ZHANG.name,
      channel: 'oncall-feishu',
    });

    // The same callback again (re-signed now): a replay, refused, nothing more happens.
    const replay = feishuCallbackRequest(JSON.parse(decryptForTest(first.body)), ENCRYPT_KEY, {
      timestampSeconds: now(),
    });
    expect((await callback(replay)).status).toBe(401);

    // The follow-up (after the answer): the card updated in place, a reply in its thread.
    await pollUntil(
      async () => (message!.replies.length >= 1 ? true : undefined),
      () => `replies: ${message!.replies.length}`,
      { deadlineMs: 10_000, intervalMs: 50 },
    );
    expect(message!.replies[0]).toMatchObject({ inThread: true });
    expect(stateOf(message!.updates.at(-1) as Card)).toMatch(/👀 由 Zhang San/);

    const resolved = {
      ...firing,
      status: 'resolved',
      alerts: firing.alerts.map((a) => ({ ...a, status: 'resolved', endsAt: '2026-11-30T12:30:00Z' })),
    };
    expect((await webhook(resolved)).status).toBe(200);
    expect(feishu.messages).toHaveLength(1);
    expect(stateOf(message!.updates.at(-1) as Card)).toMatch(/^✅ 已于 2026-11-30 12:30:00 UTC 恢复 · 👀 由 Zhang San/);
    expect(message!.replies).toHaveLength(2);
    expect(message!.replies[1]!.inThread).toBe(true);
    expect(feishu.violations).toEqual([]);
    const all = logs.join('\n');
    for (const secret of [APP_SECRET, ENCRYPT_KEY, VERIFICATION_TOKEN, 't-fake0001']) expect(all).not.toContain(secret);
  });

  it('answers the url_verification challenge; a callback that is not an Acknowledge click is answered {}', async () => {
    const challenge = feishuCallbackRequest(
      { challenge: 'c-4f2a', token: VERIFICATION_TOKEN, type: 'url_verification' },
      ENCRYPT_KEY,
      { timestampSeconds: now() },
    );
    const answer = await callback({ body: challenge.body, headers: { 'content-type': 'application/json' } });
    expect(await answer.json()).toEqual({ challenge: 'c-4f2a' });
    const other = cardActionPayload({
      eventId: 'ev-other',
      appId: APP_ID,
      verificationToken: VERIFICATION_TOKEN,
      openId: ZHANG.openId,
      messageId: 'om_unknown',
      chatId: CHAT,
      value: { action: 'something-else' },
    });
    const res = await callback(feishuCallbackRequest(other, ENCRYPT_KEY, { timestampSeconds: now() }));
    expect([res.status, await res.json()]).toEqual([200, {}]);
    const otherApp = { ...other, header: { ...other.header, event_id: 'ev-app', app_id: 'cli_someoneelse0001' } };
    expect((await callback(feishuCallbackRequest(otherApp, ENCRYPT_KEY, { timestampSeconds: now() }))).status).toBe(
      401,
    );
  });

  it('a send whose answer was lost is retried with the same uuid: one card', async () => {
    const body = fixture('firing-kv-cache-critical');
    body.groupKey = `${body.groupKey}#lost-answer`;
    body.alerts = body.alerts.map((a) => ({
      ...a,
      fingerprint: `${a.fingerprint}0`,
      startsAt: '2026-11-30T13:00:00Z',
    }));
    const before = feishu.messages.length;
    feishu.loseNextSendAnswer();
    expect((await webhook(body)).status).toBe(200);
    expect(feishu.messages).toHaveLength(before + 1);
    const sends = feishu.server.requests.filter(
      (r) => r.method === 'POST' && r.path.startsWith('/open-apis/im/v1/messages?'),
    );
    const uuids = sends.slice(-2).map((r) => JSON.parse(r.body.toString()).uuid);
    expect(uuids[0]).toBe(uuids[1]);
  });

  it('an expired tenant_access_token is refreshed and the call tried once more', async () => {
    const issued = feishu.tokensIssued();
    feishu.expireTokens();
    const body = fixture('firing-kv-cache-critical');
    body.groupKey = `${body.groupKey}#token`;
    body.alerts = body.alerts.map((a) => ({
      ...a,
      fingerprint: `${a.fingerprint}1`,
      startsAt: '2026-11-30T14:00:00Z',
    }));
    expect((await webhook(body)).status).toBe(200);
    expect(feishu.tokensIssued()).toBe(issued + 1);
    expect(feishu.violations).toEqual([]);
  });
});

/** The plain payload of an encrypted callback body (the test's own decryption, for building a replay). */
function decryptForTest(body: string): string {
  const data = Buffer.from((JSON.parse(body) as { encrypt: string }).encrypt, 'base64');
  const decipher = createDecipheriv(
    'aes-256-cbc',
    createHash('sha256').update(ENCRYPT_KEY).digest(),
    data.subarray(0, 16),
  );
  return Buffer.concat([decipher.update(data.subarray(16)), decipher.final()]).toString('utf8');
}
