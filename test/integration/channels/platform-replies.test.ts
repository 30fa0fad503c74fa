/**
 * Platform replies through the real app, the real channels and loopback platforms: what Alertmanager
 * hears (200, or 5xx so it retries) and what the response and the log lines may quote. Every webhook
 * channel gets the same hostile replies: a platform or proxy echoing the webhook URL in any encoding,
 * or a long reply with the hook id past the excerpt's end.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApp } from '../../../shared/http/app.js';
import { createFeishuChannel } from '../../../shared/channels/feishu/index.js';
import { createSlackChannel } from '../../../shared/channels/slack/index.js';
import type { Channel } from '../../../shared/channels/channel.js';
import { testDeps } from '../../helpers/pipeline-deps.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../../shared/store/local-dynamodb.js';
import { ensureTable } from '../../../shared/store/table.js';
import type { Enrichment } from '../../../shared/enrich/types.js';
import { createLogger } from '../../../shared/core/logger.js';
import { Secret } from '../../../shared/core/secret.js';
import { fixtureText } from '../../helpers/fixtures.js';
import { startLoopback, type Loopback, type Responder, type ScriptedReply } from '../../helpers/loopback.js';

const TOKEN = 'replies-token-0123456789abcdef';
const SLACK_PATH = '/services/TREPLY001/BREPLY002/ReplySlackSecret987';
const FEISHU_PATH = '/open-apis/bot/v2/hook/0f3a9c2e-reply-feishu-secret-77d1';
const json = (body: unknown, status = 200): ScriptedReply => ({
  status,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

let db: LocalDynamoDb;
let platform: Loopback | undefined;
let table = 0;
let tableName: string;
beforeAll(async () => {
  db = await startLocalDynamoDb('platform-replies');
});
afterAll(() => db.close());
beforeEach(async () => {
  tableName = `replies-${++table}`;
  await ensureTable(db.client, tableName);
});
afterEach(async () => {
  await platform?.close();
  platform = undefined;
});

const CHANNELS: Record<'slack' | 'feishu', { path: string; make: (url: Secret) => Channel }> = {
  slack: { path: SLACK_PATH, make: (webhookUrl) => createSlackChannel({ webhookUrl, name: 'slack' }) },
  feishu: { path: FEISHU_PATH, make: (webhookUrl) => createFeishuChannel({ webhookUrl, name: 'feishu' }) },
};

/** The app with one real channel towards a loopback platform answering every request with `reply`; its log lines are collected. */
async function appWith(kind: keyof typeof CHANNELS, reply: ScriptedReply | Responder) {
  const lines: string[] = [];
  const server = await startLoopback(reply);
  platform = server;
  const channel = CHANNELS[kind].make(new Secret(`${server.url}${CHANNELS[kind].path}`));
  const app = createApp(
    { webhookToken: new Secret(TOKEN) },
    testDeps({
      table: { client: db.client, tableName },
      channels: [channel],
      enrich: async (alerts) =>
        new Map<string, Enrichment>(
          alerts.map((a) => [a.fingerprint, { status: 'unavailable', kind: 'queue', reason: 'test' }]),
        ),
      delivery: { timeoutMs: 2000, retries: 1, budgetMs: 5000 },
      logger: createLogger('debug', (line) => lines.push(line)),
    }),
  );
  const post = () =>
    app.request('/v1/alertmanager', {
      method: 'POST',
      body: fixtureText('firing-kv-cache-critical'),
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
    });
  return { post, lines, requests: server.requests };
}

describe('Feishu rate limits are transient, whatever the HTTP status', () => {
  it.each([
    ['HTTP 400, code 9499 too many request', json({ code: 9499, msg: 'too many request', data: {} }, 400)],
    ['HTTP 400, code 99991400 (older OpenAPIs)', json({ code: 99991400, msg: 'request trigger frequency limit' }, 400)],
    ['HTTP 200, code 11232', json({ code: 11232, msg: 'frequency limited', data: {} })],
  ])('%s: retried, then 502 so Alertmanager retries', async (_name, reply) => {
    const { post, requests } = await appWith('feishu', reply);
    const res = await post();
    expect(res.status).toBe(502);
    expect(((await res.json()) as { channels: Record<string, { status: string }> }).channels.feishu!.status).toBe(
      'failed',
    );
    expect(requests).toHaveLength(2);
  });
});

/** The credential part of each hook path: what must not show, in any encoding or in part. */
const TOKENS: Record<keyof typeof CHANNELS, string> = {
  slack: 'ReplySlackSecret987',
  feishu: '0f3a9c2e-reply-feishu-secret-77d1',
};

/**
 * Whether `text` shows 8 or more consecutive characters of `token`: as is (any case), or inside any
 * run of base64/base64url characters decoded from any of its four starting offsets.
 */
function leaks(text: string, token: string): boolean {
  const windows = Array.from({ length: token.length - 7 }, (_, i) => token.slice(i, i + 8).toLowerCase());
  const decoded = [...text.matchAll(/[A-Za-z0-9+/_-]{8,}/g)].flatMap((m) =>
    [0, 1, 2, 3].map((o) => Buffer.from(m[0].slice(o), 'base64').toString('latin1')),
  );
  return [text, ...decoded].some((t) => windows.some((w) => t.toLowerCase().includes(w)));
}

/** Replies that quote the request URL: base64 and base64url at every alignment, double-encoded, upper-cased, cut long. */
const ECHOES: [string, (path: string) => ScriptedReply][] = [
  ...[0, 1, 2].flatMap((pad): [string, (path: string) => ScriptedReply][] => [
    [
      `404 echoing the path in base64 behind ${pad} bytes`,
      (path) => ({
        status: 404,
        body: `unknown hook ${Buffer.from(`${'/x/'.slice(0, pad)}${path}`).toString('base64')}`,
      }),
    ],
    [
      `404 echoing the path in base64url behind ${pad} bytes`,
      (path) => ({
        status: 404,
        body: `unknown hook ${Buffer.from(`${'/x/'.slice(0, pad)}${path}`).toString('base64url')}`,
      }),
    ],
  ]),
  [
    '404 echoing the path double percent-encoded and upper-cased',
    (path) => ({
      status: 404,
      body: `unknown hook ${encodeURIComponent(encodeURIComponent(path))} ${path.toUpperCase()}`,
    }),
  ],
  [
    '503 with the path past the excerpt length',
    (path) => ({ status: 503, body: `${'x'.repeat(170)} upstream=${path}` }),
  ],
  [
    'Feishu-style 200 with code 19001 and the path past 200 characters of msg',
    (path) => json({ code: 19001, msg: `${'x'.repeat(158)} hook=${path}` }),
  ],
  [
    'Feishu-style 200 with code 19001 and the path in base64',
    (path) => json({ code: 19001, msg: `param invalid: b64=${Buffer.from(`/feishu${path}`).toString('base64')}` }),
  ],
];

describe('no reply can put a webhook secret in the response or the logs', () => {
  for (const kind of Object.keys(CHANNELS) as (keyof typeof CHANNELS)[]) {
    it.each(ECHOES)(`${kind}: %s`, async (_name, echo) => {
      const { post, lines, requests } = await appWith(kind, echo(CHANNELS[kind].path));
      const res = await post();
      const body = await res.text();
      expect(requests.length).toBeGreaterThan(0);
      expect(leaks(body, TOKENS[kind]), body).toBe(false);
      for (const line of lines) expect(leaks(line, TOKENS[kind]), line).toBe(false);
    });
  }
});

describe('Slack: a 200 is delivered only with Slack’s documented success body `ok`', () => {
  it.each([
    [
      'a 200 with an error code as body',
      { status: 200, headers: { 'content-type': 'text/plain' }, body: 'invalid_payload' },
    ],
    [
      'a 200 login page from a proxy',
      { status: 200, headers: { 'content-type': 'text/html' }, body: '<html>login</html>' },
    ],
    ['an empty 200', { status: 200, body: '' }],
  ])('%s is a failed delivery (502, Alertmanager retries), logged with the body', async (_name, reply) => {
    const { post, lines } = await appWith('slack', reply);
    const res = await post();
    expect(res.status).toBe(502);
    expect(((await res.json()) as { channels: Record<string, { status: string }> }).channels.slack!.status).toBe(
      'failed',
    );
    expect(lines.some((l) => l.includes('channel attempt failed') && l.includes('slack: HTTP 200'))).toBe(true);
  });

  it('`ok` (and a workflow webhook’s `{"ok":true}`) is delivered', async () => {
    for (const body of ['ok', 'ok\n', '{"ok":true}']) {
      const { post } = await appWith('slack', { status: 200, body });
      expect((await post()).status).toBe(200);
      await platform?.close();
      platform = undefined;
      tableName = `replies-${++table}`;
      await ensureTable(db.client, tableName);
    }
  });
});
