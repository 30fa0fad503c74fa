/**
 * What the environment's channels send, pinned: an environment that sets every setting (with the Slack
 * webhook, and with the Slack app) and a routing file with an instance of every type build the same
 * channels, under the same names and in the same order, and each sends the same request to the same
 * place (loopback platforms, the SNS stand-in) as before. The escalation targets are built and pinned the
 * same way. Together with `test/unit/runtime/config-contract.test.ts` this is the settings contract.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Channel } from '../../../shared/channels/channel.js';
import { feishuAppClient } from '../../../shared/channels/feishu/app-settings.js';
import type { SlackThreadStore } from '../../../shared/channels/slack/threads.js';
import { buildChannels, buildEscalationTargets } from '../../../shared/runtime/channels.js';
import type { FeishuCardStore } from '../../../shared/store/feishu-cards.js';
import { type Config, loadConfig } from '../../../shared/runtime/config.js';
import { type FakeFeishuApi, startFakeFeishuApi } from '../../helpers/feishu-api.js';
import { FULL_ENV, LOOPBACK, ROUTING_FEISHU_CHAT, ROUTING_FILE_TEXT, SLACK_APP_ENV } from '../../helpers/full-env.js';
import { type Loopback, type RecordedRequest, startLoopback } from '../../helpers/loopback.js';
import { fixtureNotification } from '../../helpers/notifications.js';
import { type FakeSlackApi, slackCall, startFakeSlackApi } from '../../helpers/slack-api.js';
import { decodePublish, type SnsStandIn, startSnsServer } from '../../helpers/sns-server.js';

const NOW = new Date('2026-11-29T12:00:00Z');
const threads: SlackThreadStore = { get: async () => undefined, create: async () => true, save: async () => undefined };
const cards: FeishuCardStore = { get: async () => undefined, create: async () => true, save: async () => undefined };

/** The channels of a configuration, then its escalation targets, as the runtime builds them. */
function channelsOf(config: Config, write: (s: string) => void): Channel[] {
  const app = config.channelOptions['feishu-app'];
  const feishuApp = app && { contacts: feishuAppClient(app, () => NOW.getTime()), cards };
  return [
    ...buildChannels(config, { write, now: () => NOW, slackThreads: threads, feishuApp, warn: () => undefined }),
    ...buildEscalationTargets(config),
  ];
}

let hooks: Loopback;
let slackApi: FakeSlackApi;
let feishuApi: FakeFeishuApi;
let sns: SnsStandIn;
const dir = mkdtempSync(join(tmpdir(), 'env-channels-'));
const routingFile = join(dir, 'routing.yml');

beforeAll(async () => {
  writeFileSync(routingFile, ROUTING_FILE_TEXT);
  hooks = await startLoopback((request) =>
    request.path.startsWith('/feishu')
      ? { status: 200, body: '{"code":0,"msg":"success"}' }
      : /^\/(dingtalk|wecom)\//.test(request.path)
        ? { status: 200, headers: { 'content-type': 'application/json' }, body: '{"errcode":0,"errmsg":"ok"}' }
        : request.path.startsWith('/pagerduty')
          ? {
              status: 202,
              headers: { 'content-type': 'application/json' },
              body: '{"status":"success","message":"Event processed","dedup_key":"k"}',
            }
          : { status: 200, body: 'ok' },
  );
  slackApi = await startFakeSlackApi();
  feishuApi = await startFakeFeishuApi({
    appId: FULL_ENV.FEISHU_APP_ID!,
    appSecret: FULL_ENV.FEISHU_APP_SECRET!,
    chats: [SLACK_APP_ENV.FEISHU_CHAT_ID!, ROUTING_FEISHU_CHAT],
  });
  sns = await startSnsServer();
});
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await Promise.all([hooks.close(), slackApi.close(), feishuApi.close(), sns.close()]);
});
afterEach(() => vi.unstubAllEnvs());

/** What one request looked like on the wire, without what changes from run to run (ports, signatures' dates). */
function wire(request: RecordedRequest, kind: 'hook' | 'slack-api' | 'feishu-api' | 'sns') {
  if (kind === 'slack-api') {
    const { method, authorization, contentType, form } = slackCall(request);
    return { to: 'slack-api', method, authorization, contentType, form };
  }
  if (kind === 'sns') {
    const { params } = decodePublish(request.body);
    const region = /Credential=test\/\d{8}\/([a-z0-9-]+)\//.exec(String(request.headers.authorization))?.[1];
    return { to: 'sns', region, params };
  }
  const text = request.body.toString('utf8');
  if (kind === 'feishu-api')
    return {
      to: 'feishu-api',
      method: request.method,
      path: request.path,
      authorization: request.headers.authorization,
      body: text ? (JSON.parse(text) as unknown) : undefined,
    };
  return {
    to: 'hook',
    method: request.method,
    path: request.path,
    contentType: request.headers['content-type'],
    body: JSON.parse(text) as unknown,
  };
}

/** Sends one notification through every channel, one after the other, and records what each sent. */
async function sendThroughEach(env: Record<string, string>) {
  vi.stubEnv('AWS_ENDPOINT_URL_SNS', sns.endpoint);
  vi.stubEnv('AWS_ACCESS_KEY_ID', 'test');
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'test');
  vi.stubEnv('AWS_REGION', 'ap-southeast-1');
  vi.stubEnv('AWS_EC2_METADATA_DISABLED', 'true');
  const settings = Object.fromEntries(
    Object.entries(env).map(([name, value]) => [
      name,
      value.startsWith(`${LOOPBACK}/api`)
        ? slackApi.url
        : value.startsWith(`${LOOPBACK}/open-apis`)
          ? feishuApi.url
          : value.replace(LOOPBACK, hooks.url),
    ]),
  );
  const written: string[] = [];
  const channels = channelsOf(loadConfig({ ...settings, ROUTING_FILE: routingFile }), (s) => written.push(s));
  const notification = { ...fixtureNotification('firing-kv-cache-critical'), acknowledgeUrl: 'https://a.example/t' };
  const sent = [];
  for (const channel of channels) {
    const before = {
      hooks: hooks.requests.length,
      slack: slackApi.server.requests.length,
      feishu: feishuApi.server.requests.length,
      sns: sns.requests.length,
    };
    const lines = written.length;
    await channel.send(notification, AbortSignal.timeout(5000));
    sent.push({
      name: channel.name,
      threaded: channel.threaded,
      requests: [
        ...hooks.requests.slice(before.hooks).map((r) => wire(r, 'hook')),
        ...slackApi.server.requests.slice(before.slack).map((r) => wire(r, 'slack-api')),
        ...feishuApi.server.requests.slice(before.feishu).map((r) => wire(r, 'feishu-api')),
        ...sns.requests.slice(before.sns).map((r) => wire(r, 'sns')),
      ],
      written: written.slice(lines),
    });
  }
  return sent;
}

describe("the environment's channels", () => {
  it('send as before (Slack webhook)', async () => {
    expect(await sendThroughEach(FULL_ENV)).toMatchSnapshot();
  });

  it('send as before (Slack app)', async () => {
    expect(await sendThroughEach(SLACK_APP_ENV)).toMatchSnapshot();
  });
});
