/**
 * The Slack-app channel against a loopback Slack Web API and the thread store on dynalite: the exact
 * calls (method, bearer token, form body, channel, blocks, `ts`, `thread_ts`) and each error kind.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createSlackAppChannel } from '../../../shared/channels/slack/app-channel.js';
import { createSlackApi } from '../../../shared/channels/slack/web-api.js';
import { ContentRefusedError, DeliveryError, type Channel } from '../../../shared/channels/channel.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../../shared/store/local-dynamodb.js';
import type { Notification } from '../../../shared/render/notification.js';
import { Secret } from '../../../shared/core/secret.js';
import { DynamoDbSlackThreadStore } from '../../../shared/store/slack-threads.js';
import { startLoopback } from '../../helpers/loopback.js';
import { UNKNOWN_OUTCOME_MESSAGE } from '../../../shared/channels/channel.js';
import { SLACK_CHANNEL_ID, slackError, startFakeSlackApi, type FakeSlackApi } from '../../helpers/slack-api.js';
import { fixtureNotification } from '../../helpers/notifications.js';

const TOKEN = 'xoxb-1111-2222-TESTtokenABC';
const SETTINGS = { token: 'SLACK_BOT_TOKEN', channel: 'SLACK_CHANNEL' };
const ACK_URL = 'https://ack.example.com/v1/ack/eyJwYXlsb2FkIjoxfQ.c2lnbmF0dXJl';

describe('Slack app channel', () => {
  let db: LocalDynamoDb;
  let slack: FakeSlackApi;
  let threads: DynamoDbSlackThreadStore;
  let warnings: string[];
  let channel: Channel;
  let group = 0;

  beforeAll(async () => {
    db = await startLocalDynamoDb('slack-app-channel');
    slack = await startFakeSlackApi();
    threads = new DynamoDbSlackThreadStore(db.client, { tableName: db.tableName, ttlSeconds: 3600 });
  });
  afterAll(async () => {
    await slack.close();
    await db.close();
  });
  beforeEach(() => {
    warnings = [];
    slack.server.requests.length = 0;
    channel = channelFor(slack.url);
  });

  function channelFor(apiUrl: string, name = 'slack', locale?: 'zh-CN'): Channel {
    const api = createSlackApi({ name, token: new Secret(TOKEN), apiUrl, timeoutMs: 2000, settings: SETTINGS });
    return createSlackAppChannel({
      name,
      locale,
      api,
      channel: 'alerts',
      threads,
      warn: (m) => warnings.push(m),
      now: () => Date.parse('2026-11-30T12:10:00Z'),
    });
  }

  /** The KV-cache fixture as a fresh group (its own groupKey), firing, with an acknowledge link. */
  function firing(): Notification {
    const n = fixtureNotification('firing-kv-cache-critical');
    return { ...n, groupKey: `${n.groupKey}#${++group}`, acknowledgeUrl: ACK_URL };
  }
  const resolved = (n: Notification): Notification => ({
    ...n,
    status: 'resolved',
    acknowledgeUrl: undefined,
    alerts: n.alerts.map((a) => ({ ...a, status: 'resolved', endsAt: '2026-11-30T12:30:00Z' })),
  });
  const acked = (n: Notification): Notification => ({
    ...n,
    kind: 'acknowledged',
    acknowledgeUrl: undefined,
    alerts: n.alerts.map((a) => ({
      ...a,
      acknowledgement: { by: 'alice', at: '2026-11-30T12:05:00.000Z', channel: 'slack' },
    })),
  });
  const send = (n: Notification) => channel.send(n, AbortSignal.timeout(5000));

  it('posts the first message with chat.postMessage: bearer token, form body, channel, blocks with state line and interactive button', async () => {
    await send(firing());
    const [call] = slack.calls();
    expect(slack.calls()).toHaveLength(1);
    expect(call!.method).toBe('chat.postMessage');
    expect(call!.authorization).toBe(`Bearer ${TOKEN}`);
    expect(call!.contentType).toBe('application/x-www-form-urlencoded');
    expect(call!.form.channel).toBe('alerts');
    expect(call!.form.thread_ts).toBeUndefined();
    expect(call!.form.unfurl_links).toBe('false');
    expect(call!.form.text).toMatch(/^🔥 Firing \(1 alert\)\n🔥 FIRING · critical · VLLMKVCacheNearlyFull/);
    expect(call!.blocks.map((b) => b.type)).toEqual(['header', 'context', 'actions', 'section', 'context']);
    expect(call!.blocks[1]).toEqual({
      type: 'context',
      elements: [{ type: 'mrkdwn', text: '🔥 *Firing* (1 alert)', verbatim: true }],
    });
    expect(call!.blocks[2]).toEqual({
      type: 'actions',
      elements: [
        {
          type: 'button',
          text: { type: 'plain_text', text: 'Acknowledge', emoji: true },
          action_id: 'acknowledge',
          style: 'primary',
          value: 'eyJwYXlsb2FkIjoxfQ.c2lnbmF0dXJl',
        },
        {
          type: 'button',
          text: { type: 'plain_text', text: 'Acknowledge …', emoji: true },
          action_id: 'acknowledge_page',
          url: ACK_URL,
        },
      ],
    });
  });

  it('acknowledgement and resolve update the original message in place and reply in its thread', async () => {
    const first = firing();
    await send(first);
    await send(acked(first));
    await send(resolved(first));
    const calls = slack.calls();
    expect(calls.map((c) => c.method)).toEqual([
      'chat.postMessage',
      'chat.update',
      'chat.postMessage',
      'chat.update',
      'chat.postMessage',
    ]);
    const originalTs = calls[1]!.form.ts!;
    expect(originalTs).toMatch(/^1764500000\.\d{6}$/);
    for (const update of [calls[1]!, calls[3]!]) {
      expect(update.form.channel).toBe(SLACK_CHANNEL_ID);
      expect(update.form.ts).toBe(originalTs);
    }
    for (const reply of [calls[2]!, calls[4]!]) {
      expect(reply.form.channel).toBe(SLACK_CHANNEL_ID);
      expect(reply.form.thread_ts).toBe(originalTs);
      expect(reply.blocks.some((b) => b.type === 'actions')).toBe(false);
    }
    expect(calls[1]!.blocks[1]).toMatchObject({
      elements: [{ text: '🔥 *Firing* (1 alert) · 👀 Acknowledged by alice at 2026-11-30 12:05:00 UTC' }],
    });
    expect(calls[1]!.blocks.some((b) => b.type === 'actions')).toBe(false);
    expect(calls[3]!.blocks[1]).toMatchObject({
      elements: [
        { text: '✅ *Resolved* at 2026-11-30 12:30:00 UTC · 👀 Acknowledged by alice at 2026-11-30 12:05:00 UTC' },
      ],
    });
    // The rest of the original message is unchanged by the updates.
    expect(calls[3]!.blocks.slice(2)).toEqual(calls[0]!.blocks.slice(3));
    expect(calls[2]!.form.text).toMatch(/Acknowledged by \*alice\*/);
    expect(calls[4]!.form.text).toMatch(/RESOLVED/);
  });

  it('a zh-CN instance writes its state line in Chinese, in every update, with no English phrase of its own', async () => {
    channel = channelFor(slack.url, 'slack-zh', 'zh-CN');
    const first = firing();
    await send(first);
    await send(acked(first));
    await send(resolved(first));
    const lines = slack
      .calls()
      .filter((c) => c.method === 'chat.update' || !c.form.thread_ts)
      .map((c) => (c.blocks[1]!.elements as { text: string }[])[0]!.text);
    expect(lines).toEqual([
      '🔥 告警中（1 条）',
      '🔥 告警中（1 条） · 👀 由 alice 于 2026-11-30 12:05:00 UTC 认领',
      '✅ 已于 2026-11-30 12:30:00 UTC 恢复 · 👀 由 alice 于 2026-11-30 12:05:00 UTC 认领',
    ]);
    for (const line of lines) expect(line.replace(/alice|UTC/g, '')).not.toMatch(/[A-Za-z]{2,}/);
  });

  it('a group firing again after its resolve starts a new thread', async () => {
    const first = firing();
    await send(first);
    await send(resolved(first));
    await send(first);
    const calls = slack.calls();
    expect(calls.map((c) => c.method)).toEqual([
      'chat.postMessage',
      'chat.update',
      'chat.postMessage',
      'chat.postMessage',
    ]);
    expect(calls[3]!.form.thread_ts).toBeUndefined();
    expect(calls[3]!.form.channel).toBe('alerts');
  });

  it('an original that can no longer be updated (message_not_found) gets a new top-level message', async () => {
    const first = firing();
    await send(first);
    slack.server.reply(slackError('message_not_found'));
    await send(resolved(first));
    const calls = slack.calls();
    expect(calls.map((c) => c.method)).toEqual(['chat.postMessage', 'chat.update', 'chat.postMessage']);
    expect(calls[2]!.form.thread_ts).toBeUndefined();
  });

  describe('Web API errors by kind', () => {
    const failure = async (n: Notification = firing()) => {
      const err = await send(n).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(DeliveryError);
      expect((err as Error).message).not.toContain(TOKEN);
      return err as DeliveryError;
    };

    it('429 with Retry-After: retryable, rate_limited, the wait in milliseconds', async () => {
      slack.server.reply({ status: 429, headers: { 'retry-after': '7' }, body: '' });
      const err = await failure();
      expect(err).toMatchObject({ retryable: true, retryAfterMs: 7000, reason: 'rate_limited' });
      expect(slack.calls()).toHaveLength(1); // the client's own retries are off: the pipeline retries
    });

    it('ratelimited in the body: retryable, rate_limited', async () => {
      slack.server.reply(slackError('ratelimited'));
      expect(await failure()).toMatchObject({ retryable: true, reason: 'rate_limited' });
    });

    it('channel_not_found: permanent, names SLACK_CHANNEL', async () => {
      slack.server.reply(slackError('channel_not_found'));
      const err = await failure();
      expect(err).toMatchObject({ retryable: false, reason: 'client_error' });
      expect(err.message).toBe(
        'slack: Slack answered channel_not_found: check SLACK_CHANNEL (a channel id such as C0123456789)',
      );
    });

    it('not_in_channel: permanent, says to invite the app and names SLACK_CHANNEL', async () => {
      slack.server.reply(slackError('not_in_channel'));
      const err = await failure();
      expect(err.retryable).toBe(false);
      expect(err.message).toBe(
        'slack: Slack answered not_in_channel: invite the app to the channel (/invite @app), or check SLACK_CHANNEL (a channel id such as C0123456789)',
      );
    });

    it('invalid_auth: permanent, names SLACK_BOT_TOKEN', async () => {
      slack.server.reply(slackError('invalid_auth'));
      const err = await failure();
      expect(err).toMatchObject({ retryable: false, reason: 'client_error' });
      expect(err.message).toMatch(/^slack: Slack answered invalid_auth: check SLACK_BOT_TOKEN /);
    });

    it('invalid_blocks: the content is refused (a reduced rendering may pass)', async () => {
      slack.server.reply(slackError('invalid_blocks'));
      expect(await failure()).toBeInstanceOf(ContentRefusedError);
    });

    it('HTTP 503: retryable server_error; HTTP 404: permanent client_error', async () => {
      slack.server.reply({ status: 503, body: 'upstream' });
      expect(await failure()).toMatchObject({ retryable: true, reason: 'server_error' });
      slack.server.reply({ status: 404, body: 'no such method' });
      expect(await failure()).toMatchObject({ retryable: false, reason: 'client_error' });
    });

    it('no answer within the signal: retryable timeout, outcome unknown', async () => {
      slack.server.reply({ hang: true });
      const err = await channel.send(firing(), AbortSignal.timeout(200)).then(
        () => undefined,
        (e: unknown) => e,
      );
      // Slack had the whole request and may have posted it: an unknown outcome (one more try, at most).
      expect(err).toMatchObject({ retryable: true, reason: 'timeout', outcomeUnknown: true });
      expect((err as Error).message).toBe(`slack: ${UNKNOWN_OUTCOME_MESSAGE}`);
    });

    it('a redirect is not followed (the token travels in a header)', async () => {
      const elsewhere = await startLoopback();
      slack.server.reply({ status: 302, headers: { location: `${elsewhere.url}/api/chat.postMessage` } });
      const err = await failure();
      expect(err.retryable).toBe(true);
      expect(elsewhere.requests).toHaveLength(0);
      await elsewhere.close();
    });

    it('a failed thread reply is retried without posting the update twice into the thread', async () => {
      const first = firing();
      await send(first);
      slack.server.reply(
        { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ok: true }) },
        { status: 503, body: '' },
      );
      expect(await failure(resolved(first))).toMatchObject({ retryable: true });
      await send(resolved(first));
      const methods = slack.calls().map((c) => `${c.method}${c.form.thread_ts ? ' (reply)' : ''}`);
      expect(methods).toEqual([
        'chat.postMessage',
        'chat.update',
        'chat.postMessage (reply)',
        'chat.update',
        'chat.postMessage (reply)',
      ]);
    });
  });
});
