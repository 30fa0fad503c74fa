/**
 * The Feishu app channel against the loopback Open API stand-in and the card store on dynalite: the
 * escalation updates the card, replies in its thread @-mentioning the people, and buzzes them with the
 * urgent API once; a card that is gone gets a new one; a chat without threads gets a plain reply;
 * errors that name a setting; the reduced card (after a refused `<at>`) has no mentions.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createFeishuAppChannel, type FeishuAppChannel } from '../../../shared/channels/feishu/app-channel.js';
import { appSettingNames } from '../../../shared/channels/feishu/app-settings.js';
import { FeishuContacts } from '../../../shared/channels/feishu/contacts.js';
import { FeishuOpenApi, type UrgentKind } from '../../../shared/channels/feishu/open-api.js';
import { deliver } from '../../../shared/channels/deliver.js';
import { createLogger } from '../../../shared/core/logger.js';
import { loadConfig } from '../../../shared/runtime/config.js';
import { createDeps } from '../../../shared/runtime/deps.js';
import { Secret } from '../../../shared/core/secret.js';
import type { Notification } from '../../../shared/render/notification.js';
import { DynamoDbFeishuCardStore } from '../../../shared/store/feishu-cards.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../../shared/store/local-dynamodb.js';
import { startFakeFeishuApi, type FakeFeishuApi } from '../../helpers/feishu-api.js';
import { fixtureNotification } from '../../helpers/notifications.js';

const APP_ID = 'cli_a5fb0ae6a4fake02';
const APP_SECRET = 'feishu-app-secret-0123456789abcdef';
const CHAT = 'oc_5ad11d72b830411d72b836c2';
/** A chat that takes no replies in a thread. */
const THREADLESS_CHAT = 'oc_0f1e2d3c4b5a69788796a5b4c3d2e1f0';
const ONCALL = 'ou_7d8a6e6df7621556ce0d21922b676706';
const LI = { email: 'li.si@example.com', openId: 'ou_919112245678741d29069abcdef02345' };
const ACK_URL = 'https://alerts.example.com/v1/ack/eyJwYXlsb2FkIjoxfQ.c2lnbmF0dXJl';

type Card = { elements: { tag: string; content?: string; elements?: { content: string }[] }[] };
const stateOf = (card: Card) => card.elements.find((e) => e.tag === 'note')?.elements?.[0]?.content ?? '';
const mentionOf = (card: Card) => card.elements.find((e) => e.tag === 'markdown')?.content;

describe('Feishu app channel', () => {
  let db: LocalDynamoDb;
  let feishu: FakeFeishuApi;
  let cards: DynamoDbFeishuCardStore;
  let warnings: string[];
  let group = 0;

  beforeAll(async () => {
    db = await startLocalDynamoDb('feishu-app-channel');
    feishu = await startFakeFeishuApi({
      appId: APP_ID,
      appSecret: APP_SECRET,
      chats: [CHAT, THREADLESS_CHAT],
      threadless: [THREADLESS_CHAT],
      users: { [LI.email]: { openId: LI.openId, name: 'Li Si' } },
    });
    cards = new DynamoDbFeishuCardStore(db.client, { tableName: db.tableName, ttlSeconds: 3600 });
  });
  afterAll(async () => {
    await feishu.close();
    await db.close();
  });
  beforeEach(() => {
    warnings = [];
  });

  function channelFor(options: { urgent?: UrgentKind; mention?: string[]; chatId?: string } = {}): FeishuAppChannel {
    const api = new FeishuOpenApi({
      name: 'feishu-app',
      appId: APP_ID,
      appSecret: new Secret(APP_SECRET),
      apiUrl: feishu.url,
      settings: appSettingNames('FEISHU_CHAT_ID', 'channels.team.mention'),
    });
    return createFeishuAppChannel({
      name: 'team',
      chatId: options.chatId ?? CHAT,
      contacts: new FeishuContacts(api),
      cards,
      mention: options.mention ?? [ONCALL, LI.email],
      urgent: options.urgent,
      interactive: true,
      silence: true,
      warn: (message, fields) => void warnings.push(`${message} ${JSON.stringify(fields)}`),
      now: () => Date.now(),
    });
  }
  const firing = (): Notification => ({
    ...fixtureNotification('firing-kv-cache-critical'),
    groupKey: `{}:{group="${++group}"}`,
    acknowledgeUrl: ACK_URL,
  });
  const send = (channel: FeishuAppChannel, n: Notification) => channel.send(n, AbortSignal.timeout(5000));

  it('escalation: the card says so, the thread reply @-mentions, the urgent API buzzes the mentioned people once', async () => {
    const channel = channelFor({ urgent: 'app' });
    const n = firing();
    await send(channel, n);
    const message = feishu.messages.at(-1)!;
    expect(mentionOf(message.card as Card)).toBe(`<at id=${ONCALL}></at> <at id=${LI.openId}></at>`);
    // Two buttons and the page: silence offered with ALERTMANAGER_URL.
    const actions = (
      message.card as { elements: { tag: string; actions?: { text: { content: string } }[] }[] }
    ).elements.find((e) => e.tag === 'action')!.actions!;
    expect(actions.map((a) => a.text.content)).toEqual(['认领', '认领并静默 1 小时', '打开页面']);

    const escalation: Notification = { ...n, kind: 'escalation' };
    await send(channel, escalation);
    await send(channel, escalation); // a retried escalation
    expect(stateOf(message.updates.at(-1) as Card)).toMatch(/^🔥 告警中（1 条） · 📣 已于 .+ 升级$/);
    expect(message.replies).toHaveLength(1); // the second reply carried the same uuid
    expect(mentionOf(message.replies[0]!.card as Card)).toBe(`<at id=${ONCALL}></at> <at id=${LI.openId}></at>`);
    expect(message.urgent).toEqual([{ kind: 'app', idType: 'open_id', ids: [ONCALL, LI.openId] }]);
    expect(feishu.violations).toEqual([]);
  });

  it('without urgent, an escalation only updates the card and replies', async () => {
    const channel = channelFor();
    const n = firing();
    await send(channel, n);
    await send(channel, { ...n, kind: 'escalation' });
    expect(feishu.messages.at(-1)!.urgent).toEqual([]);
  });

  it('a chat that takes no thread replies gets the reply beside the card, once', async () => {
    const channel = channelFor({ chatId: THREADLESS_CHAT });
    const n = firing();
    await send(channel, n);
    await send(channel, { ...n, kind: 'escalation' });
    await send(channel, { ...n, kind: 'escalation' }); // a retried escalation
    const message = feishu.messages.at(-1)!;
    expect(message.chatId).toBe(THREADLESS_CHAT);
    expect(message.replies.map((r) => r.inThread)).toEqual([false]);
    expect(feishu.violations).toEqual([]);
  });

  it('a card that is gone (deleted, recalled) gets a new one rather than losing the news', async () => {
    const channel = channelFor();
    const n = firing();
    await send(channel, n);
    const before = feishu.messages.length;
    feishu.messages.pop(); // the stand-in answers 230110 for a message it no longer has
    await send(channel, { ...n, kind: 'escalation' });
    expect(feishu.messages).toHaveLength(before);
    expect(stateOf(feishu.messages.at(-1)!.card as Card)).toMatch(/📣/);
  });

  it('wrong credentials (or a Lark app on the Feishu domain) show at start, naming the settings', async () => {
    const check = (secret: string) => {
      const config = loadConfig({ FEISHU_APP_ID: APP_ID, FEISHU_APP_SECRET: secret, FEISHU_API_URL: feishu.url });
      return createDeps(
        config,
        { dynamodb: db.client },
        createLogger('error', () => undefined),
      ).checkFeishuApp!();
    };
    expect(await check(APP_SECRET)).toBeUndefined();
    expect(await check('not-the-app-secret-0123456789')).toMatch(
      /Feishu token answered code 10015: wrong app secret \(wrong app secret: check FEISHU_APP_ID and FEISHU_APP_SECRET, and FEISHU_API_URL/,
    );
  });

  it('a chat the bot is not in fails permanently, naming the chat setting', async () => {
    const err = await send(channelFor({ chatId: 'oc_notamemberofthischat' }), firing()).catch((e: Error) => e);
    expect(err).toMatchObject({ retryable: false });
    expect((err as Error).message).toMatch(/code 230002.*bot is not in the chat.*check FEISHU_CHAT_ID/);
  });

  it('an <at> Feishu refuses: the reduced card goes out without mentions', async () => {
    const channel = channelFor({ mention: ['ou_unknownunknownunknown'] });
    feishu.refuseNextSend(
      230099,
      'Failed to create card content, ext=ErrCode: 100290; ErrMsg: invalid user resource(at/person)',
    );
    const before = feishu.messages.length;
    const logger = createLogger('error', () => undefined);
    await deliver(channel, firing(), { timeoutMs: 5000, retries: 0, logger });
    expect(feishu.messages).toHaveLength(before + 1);
    expect(mentionOf(feishu.messages.at(-1)!.card as Card)).toBeUndefined();
  });
});
