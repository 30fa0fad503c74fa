/**
 * A webhook URL's path is its credential. Through the real wiring (configuration, channels, app,
 * dynalite ledger) a platform or proxy that echoes the path, and an error message that quotes the
 * URL, must leave no trace of it in the logs or in the HTTP response Alertmanager receives.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../shared/http/app.js';
import type { Channel } from '../../shared/channels/channel.js';
import { loadConfig, type Config } from '../../shared/runtime/config.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import { DEFAULT_TABLE_NAME } from '../../shared/store/table.js';
import { createLogger } from '../../shared/core/logger.js';
import { createDeps } from '../../shared/runtime/deps.js';
import { fixture } from '../helpers/fixtures.js';
import { startLoopback, type Loopback } from '../helpers/loopback.js';
import { startFakeFeishuApi } from '../helpers/feishu-api.js';

const HOOK_PATH = '/services/T000/B000/XXXXXXXX';
const TOKEN = 'XXXXXXXX';
const FEISHU_PATH = '/open-apis/bot/v2/hook/0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0';

let db: LocalDynamoDb;
let slack: Loopback;
let feishu: Loopback;
let config: Config;
let hookUrl: string;
const lines: string[] = [];

/** Every form of the credential a log line or response must not hold (the token is case-insensitive below). */
function leakForms(): string[] {
  return [
    hookUrl,
    HOOK_PATH,
    HOOK_PATH.slice(1),
    TOKEN,
    encodeURIComponent(hookUrl),
    encodeURIComponent(HOOK_PATH),
    hookUrl.replaceAll('/', '\\/'),
  ];
}
const leaked = (text: string) =>
  leakForms()
    .filter((form) => text.includes(form))
    .concat(/xxxxxxxx/i.test(text) ? ['token'] : []);

/** A channel whose HTTP library quotes the URL in its error, as many do. */
const quotingChannel = (url: string): Channel => ({
  name: 'quoting',
  async send() {
    throw new TypeError(`fetch failed: POST ${url} (socket hang up)`);
  },
});

beforeAll(async () => {
  [db, slack, feishu] = await Promise.all([startLocalDynamoDb(DEFAULT_TABLE_NAME), startLoopback(), startLoopback()]);
  hookUrl = `${slack.url}${HOOK_PATH}`;
  // In-process requests carry no token: ALLOW_UNAUTHENTICATED serves them (the fail-closed default answers 503).
  config = loadConfig({
    SLACK_WEBHOOK_URL: hookUrl,
    FEISHU_WEBHOOK_URL: `${feishu.url}${FEISHU_PATH}`,
    DELIVERY_RETRIES: '0',
    LOG_LEVEL: 'debug',
    ALLOW_UNAUTHENTICATED: 'true',
  });
});
afterAll(async () => Promise.all([db.close(), slack.close(), feishu.close()]));

const only = (name: string) => (deps: ReturnType<typeof createDeps>) => deps.channels.filter((c) => c.name === name);

let group = 0;
async function post(channels: (deps: ReturnType<typeof createDeps>) => Channel[]) {
  const deps = createDeps(
    config,
    { dynamodb: db.client },
    createLogger('debug', (line) => lines.push(line)),
  );
  deps.channels = channels(deps);
  const message = fixture('firing-kv-cache-critical');
  message.groupKey = `{}:{case="${++group}"}`;
  message.alerts[0]!.fingerprint = `secret-case-${group}`;
  const response = await createApp(config, deps).request('/v1/alertmanager', {
    method: 'POST',
    body: JSON.stringify(message),
    headers: { 'content-type': 'application/json' },
  });
  return { status: response.status, body: await response.text() };
}

describe('a secret webhook URL', () => {
  it.each([
    ['a proxy page echoing the path', 404, `<html><body>No route for POST ${HOOK_PATH}</body></html>`],
    ['the path without its leading slash', 403, `invalid_token: services/T000/B000/${TOKEN}`],
    [
      'the percent-encoded URL',
      502,
      `upstream ${encodeURIComponent(`https://hooks.slack.com${HOOK_PATH}`)} unreachable`,
    ],
    ['the percent-encoded path, lower-case hex', 400, `bad path ${encodeURIComponent(HOOK_PATH).toLowerCase()}`],
    [
      'JSON with escaped slashes',
      500,
      JSON.stringify({ error: 'upstream failed' }).replace(
        '}',
        `,"url":"https:\\/\\/hooks.slack.com\\/services\\/T000\\/B000\\/${TOKEN}"}`,
      ),
    ],
    ['the token alone', 404, `no_service (token ${TOKEN.toLowerCase()})`],
  ])('is not in logs or the response when the platform replies with %s', async (_case, status, body) => {
    slack.reply({ status, body });
    lines.length = 0;
    const response = await post(only('slack'));
    expect(response.status).toBe(502);
    // The failure is still reported, naming the channel and status.
    expect(JSON.parse(response.body)).toMatchObject({
      channels: { slack: { status: 'failed', error: expect.stringContaining(`slack: HTTP ${status}`) } },
    });
    expect(lines.some((line) => line.includes('"event":"channel failed"'))).toBe(true);
    expect(leaked(response.body)).toEqual([]);
    for (const line of lines) expect(leaked(line)).toEqual([]);
  });

  it('is not in logs or the response when Feishu’s HTTP-200 error reply quotes the hook path', async () => {
    const hookId = FEISHU_PATH.split('/').at(-1)!;
    feishu.reply({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        code: 19001,
        msg: `param invalid: incoming webhook access token invalid: ${FEISHU_PATH.slice(1)}`,
        data: {},
      }),
    });
    lines.length = 0;
    const response = await post(only('feishu'));
    expect(JSON.parse(response.body)).toMatchObject({
      channels: {
        feishu: {
          status: 'failed',
          error: 'feishu: code 19001: param invalid: incoming webhook access token invalid: <redacted>',
        },
      },
    });
    for (const text of [response.body, ...lines]) {
      expect(text).not.toContain(hookId);
      expect(text).not.toContain('bot/v2/hook/');
    }
  });

  it('is not in logs or the response when an error message quotes it', async () => {
    lines.length = 0;
    const response = await post(() => [quotingChannel(hookUrl)]);
    expect(response.status).toBe(502);
    expect(JSON.parse(response.body)).toMatchObject({
      channels: { quoting: { status: 'failed', error: 'fetch failed: POST <redacted> (socket hang up)' } },
    });
    expect(leaked(response.body)).toEqual([]);
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(leaked(line)).toEqual([]);
  });
});

describe("the Feishu app's secrets", () => {
  const APP_SECRET = 'feishu-app-secret-LEAKCHECK-0123';
  const ENCRYPT_KEY = 'feishu-encrypt-key-LEAKCHECK-01';
  const VERIFICATION = 'feishu-verification-LEAKCHECK';

  it('are not in logs or the response when Feishu’s error reply quotes the app secret and the tenant token', async () => {
    const chat = 'oc_5ad11d72b830411d72b836c2';
    const fake = await startFakeFeishuApi({ appId: 'cli_a5fb0ae6a4leak01', appSecret: APP_SECRET, chats: [] });
    try {
      const feishuConfig = loadConfig({
        FEISHU_APP_ID: 'cli_a5fb0ae6a4leak01',
        FEISHU_APP_SECRET: APP_SECRET,
        FEISHU_CHAT_ID: chat,
        FEISHU_API_URL: fake.url,
        FEISHU_ENCRYPT_KEY: ENCRYPT_KEY,
        FEISHU_VERIFICATION_TOKEN: VERIFICATION,
        PUBLIC_URL: 'https://alerts.example.com',
        ACK_SECRET: 'ack-secret-for-tests-0123456789abcdef',
        DELIVERY_RETRIES: '0',
        LOG_LEVEL: 'debug',
        ALLOW_UNAUTHENTICATED: 'true',
      });
      // The send is refused with a message quoting the secret and the token it was sent with.
      fake.refuseNextSend(230002, `bot not in chat (app_secret=${APP_SECRET}, token=t-fake0001)`);
      const logged: string[] = [];
      const deps = createDeps(
        feishuConfig,
        { dynamodb: db.client },
        createLogger('debug', (l) => logged.push(l)),
      );
      const message = fixture('firing-kv-cache-critical');
      message.groupKey = '{}:{case="feishu-app"}';
      const response = await createApp(feishuConfig, deps).request('/v1/alertmanager', {
        method: 'POST',
        body: JSON.stringify(message),
        headers: { 'content-type': 'application/json' },
      });
      expect(response.status).toBe(502);
      const text = [await response.text(), ...logged].join('\n');
      expect(text).toMatch(/code 230002/);
      for (const secret of [APP_SECRET, ENCRYPT_KEY, VERIFICATION, 't-fake0001']) expect(text).not.toContain(secret);
    } finally {
      await fake.close();
    }
  });
});
