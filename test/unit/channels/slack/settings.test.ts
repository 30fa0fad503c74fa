/**
 * The Slack app's settings: validated once at start-up, each problem naming its setting and never
 * echoing a secret; the routing file's `slack-app` instances; the channels they build.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { buildChannels } from '../../../../shared/runtime/channels.js';
import type { SlackThreadStore } from '../../../../shared/channels/slack/threads.js';
import { loadConfig } from '../../../../shared/runtime/config.js';
import { routingSecretNames } from '../../../../shared/routing/load.js';
import { SECRET_SETTINGS } from '../../../../shared/runtime/settings-secret.js';
import { envChannel, configProblems as problems } from '../../../helpers/config.js';

const TOKEN = 'xoxb-1111-2222-SETTINGStoken';
const ACK = { PUBLIC_URL: 'https://alerts.example.com', ACK_SECRET: 'ack-secret-for-tests-0123456789abcdef' };
const threads: SlackThreadStore = { get: async () => undefined, create: async () => true, save: async () => undefined };

const dir = mkdtempSync(join(tmpdir(), 'slack-app-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const routingFile = (text: string) => {
  const path = join(dir, `r${Math.random().toString(36).slice(2)}.yml`);
  writeFileSync(path, text);
  return path;
};

describe('Slack app settings', () => {
  it('builds the channel named slack from SLACK_BOT_TOKEN and SLACK_CHANNEL; the token prints redacted', () => {
    const config = loadConfig({
      SLACK_BOT_TOKEN: TOKEN,
      SLACK_CHANNEL: 'C0ALERTS01',
      SLACK_API_URL: 'http://127.0.0.1:9/api',
    });
    expect(envChannel(config, 'slack-app')).toMatchObject({ name: 'slack', channel: 'C0ALERTS01' });
    expect(config.channelOptions['slack-app']?.apiUrl).toBe('http://127.0.0.1:9/api/');
    expect(inspect(config)).not.toContain(TOKEN);
    expect(JSON.stringify(config)).not.toContain(TOKEN);
    const channels = buildChannels(config, { slackThreads: threads });
    expect(channels.map((c) => [c.name, c.threaded])).toEqual([['slack', true]]);
  });

  it('names each bad setting without echoing it', () => {
    const found = problems({
      SLACK_BOT_TOKEN: 'https://hooks.slack.com/services/T0/B0/leakedSECRET',
      SLACK_CHANNEL: 'not a channel!',
      SLACK_SIGNING_SECRET: 'short',
      SLACK_API_URL: 'http://slack.example.com/api',
    });
    expect(found.map((p) => p.split(':')[0]).sort()).toEqual([
      'SLACK_API_URL',
      'SLACK_BOT_TOKEN',
      'SLACK_CHANNEL',
      'SLACK_SIGNING_SECRET',
    ]);
    expect(found.join('\n')).not.toMatch(/leakedSECRET|short/);
    expect(found.find((p) => p.startsWith('SLACK_API_URL'))).toMatch(/https/);
  });

  it('refuses settings that only make sense together', () => {
    expect(problems({ SLACK_CHANNEL: 'C0ALERTS01' })).toEqual([
      'SLACK_CHANNEL: set, but SLACK_BOT_TOKEN is not (the Slack app posts with its bot token)',
    ]);
    expect(
      problems({
        SLACK_BOT_TOKEN: TOKEN,
        SLACK_CHANNEL: 'C0ALERTS01',
        SLACK_WEBHOOK_URL: 'https://hooks.slack.com/services/T0/B0/x',
      })[0],
    ).toMatch(/^SLACK_CHANNEL: set together with SLACK_WEBHOOK_URL/);
    expect(problems({ SLACK_SIGNING_SECRET: 'signing-secret-0123456789' })[0]).toMatch(
      /^SLACK_SIGNING_SECRET: set, but PUBLIC_URL and ACK_SECRET are not/,
    );
    expect(
      loadConfig({ SLACK_SIGNING_SECRET: 'signing-secret-0123456789', ...ACK }).channelOptions['slack-app']
        ?.signingSecret,
    ).toBeDefined();
  });

  it('keeps the incoming webhook unchanged when no bot token is set', () => {
    const config = loadConfig({ SLACK_WEBHOOK_URL: 'https://hooks.slack.com/services/T0/B0/x' });
    expect(envChannel(config, 'slack-app')).toBeUndefined();
    expect(buildChannels(config).map((c) => [c.name, c.threaded])).toEqual([['slack', undefined]]);
  });

  it('reads the bot token and signing secret from the settings secret', () => {
    expect(SECRET_SETTINGS).toEqual(expect.arrayContaining(['SLACK_BOT_TOKEN', 'SLACK_SIGNING_SECRET']));
  });

  it('routing file: slack-app instances with SLACK_BOT_TOKEN or their own token setting', () => {
    const path = routingFile(`
channels:
  ops: { type: slack-app, channel: C0OPS0001 }
  ml: { type: slack-app, channel: C0ML00001, botToken: { secret: SLACK_ML_BOT_TOKEN }, locale: zh-CN }
default: { channels: [ops, ml] }
`);
    const config = loadConfig({
      ROUTING_FILE: path,
      SLACK_BOT_TOKEN: TOKEN,
      SLACK_ML_BOT_TOKEN: 'xoxb-3333-4444-MLtoken',
    });
    expect(
      config.routing?.channels.map((c) => ({
        name: c.name,
        type: c.type,
        ...(c.type === 'slack-app' && { channel: c.channel, tokenSetting: c.settings.token }),
      })),
    ).toEqual([
      { name: 'ops', type: 'slack-app', channel: 'C0OPS0001', tokenSetting: 'SLACK_BOT_TOKEN' },
      { name: 'ml', type: 'slack-app', channel: 'C0ML00001', tokenSetting: 'SLACK_ML_BOT_TOKEN' },
    ]);
    expect(routingSecretNames(path)).toEqual(['SLACK_ML_BOT_TOKEN']);
    expect(buildChannels(config, { slackThreads: threads }).map((c) => c.name)).toEqual(['ops', 'ml']);
  });

  it('routing file: a slack-app instance without a token names the missing setting and its line', () => {
    const path = routingFile(
      `channels:\n  ops: { type: slack-app, channel: C0OPS0001 }\ndefault: { channels: [ops] }\n`,
    );
    expect(problems({ ROUTING_FILE: path })).toEqual([
      `ROUTING_FILE: ${path}:2: channels.ops.botToken: setting SLACK_BOT_TOKEN is not set (an environment variable, or a key of the settings secret in AWS)`,
    ]);
  });
});
