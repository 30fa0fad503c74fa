/**
 * The Feishu app's settings: validated once at start-up, each problem naming its setting and never
 * echoing a secret; the routing file's `feishu-app` instances and `mention`/`urgent` fields; route mentions.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { buildChannels } from '../../../../shared/runtime/channels.js';
import { loadConfig } from '../../../../shared/runtime/config.js';
import { SECRET_SETTINGS } from '../../../../shared/runtime/settings-secret.js';
import { feishuAppClient } from '../../../../shared/channels/feishu/app-settings.js';
import type { FeishuCardStore } from '../../../../shared/store/feishu-cards.js';
import { configProblems as problems } from '../../../helpers/config.js';

const SECRET = 'feishu-app-secret-0123456789abcdef';
const APP = { FEISHU_APP_ID: 'cli_a5fb0ae6a4fake01', FEISHU_APP_SECRET: SECRET };
const ACK = { PUBLIC_URL: 'https://alerts.example.com', ACK_SECRET: 'ack-secret-for-tests-0123456789abcdef' };
const CHAT = 'oc_5ad11d72b830411d72b836c2';
const cards: FeishuCardStore = { get: async () => undefined, create: async () => true, save: async () => undefined };

const dir = mkdtempSync(join(tmpdir(), 'feishu-app-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const routingFile = (text: string) => {
  const path = join(dir, `r${Math.random().toString(36).slice(2)}.yml`);
  writeFileSync(path, text);
  return path;
};

describe('Feishu app settings', () => {
  it('builds the channel named feishu from FEISHU_APP_ID, FEISHU_APP_SECRET and FEISHU_CHAT_ID; secrets print redacted', () => {
    const config = loadConfig({
      ...APP,
      ...ACK,
      FEISHU_CHAT_ID: CHAT,
      FEISHU_API_URL: 'http://127.0.0.1:9/open-apis',
      FEISHU_ENCRYPT_KEY: 'encrypt-key-0123456789abcdef',
      FEISHU_VERIFICATION_TOKEN: 'verification-token-01',
    });
    expect(config.channelOptions['feishu-app']).toMatchObject({
      chatId: CHAT,
      apiUrl: 'http://127.0.0.1:9/open-apis/',
    });
    expect(config.envChannels).toEqual([{ name: 'feishu', type: 'feishu-app', chatId: CHAT }]);
    for (const secret of [SECRET, 'encrypt-key-0123456789abcdef', 'verification-token-01']) {
      expect(inspect(config)).not.toContain(secret);
      expect(JSON.stringify(config)).not.toContain(secret);
    }
    const contacts = feishuAppClient(config.channelOptions['feishu-app']!);
    const channels = buildChannels(config, { feishuApp: { contacts, cards } });
    expect(channels.map((c) => [c.name, c.threaded])).toEqual([['feishu', true]]);
  });

  it('defaults FEISHU_API_URL to open.feishu.cn', () => {
    expect(loadConfig(APP).channelOptions['feishu-app']?.apiUrl).toBe('https://open.feishu.cn/open-apis/');
  });

  it('refuses bad values, naming the setting and never echoing it', () => {
    const found = problems({
      FEISHU_APP_ID: 'my-app',
      FEISHU_APP_SECRET: 'short',
      FEISHU_CHAT_ID: 'group-42',
      FEISHU_API_URL: 'https://open.feishu.cn/',
      FEISHU_ENCRYPT_KEY: 'short-key',
    });
    expect(found).toEqual([
      expect.stringMatching(/^FEISHU_APP_ID: must be the app's App ID \(cli_…\)$/),
      expect.stringMatching(/^FEISHU_APP_SECRET: must be the app's App Secret/),
      expect.stringMatching(/^FEISHU_CHAT_ID: must be a Feishu chat_id \(oc_…/),
      expect.stringMatching(/^FEISHU_API_URL: must be the Open API base ending in \/open-apis\/.*open\.larksuite\.com/),
      expect.stringMatching(/^FEISHU_ENCRYPT_KEY: must be the Encrypt Key .* at least 16 characters$/),
    ]);
    expect(found.join('\n')).not.toMatch(/short-key|group-42/);
    expect(problems({ ...APP, FEISHU_API_URL: 'http://open.feishu.cn/open-apis/' })).toEqual([
      'FEISHU_API_URL: must be an https URL (http only to loopback)',
    ]);
  });

  it('refuses settings that only make sense together', () => {
    expect(problems({ FEISHU_APP_ID: APP.FEISHU_APP_ID })).toEqual(['FEISHU_APP_SECRET: required with FEISHU_APP_ID']);
    expect(problems({ FEISHU_CHAT_ID: CHAT })).toEqual([
      'FEISHU_CHAT_ID: set, but FEISHU_APP_ID and FEISHU_APP_SECRET are not',
    ]);
    expect(
      problems({ ...APP, FEISHU_CHAT_ID: CHAT, FEISHU_WEBHOOK_URL: 'https://open.feishu.cn/open-apis/bot/v2/hook/x' }),
    ).toEqual([expect.stringMatching(/^FEISHU_CHAT_ID: set together with FEISHU_WEBHOOK_URL/)]);
    expect(problems({ ...APP, FEISHU_ENCRYPT_KEY: 'encrypt-key-0123456789abcdef' })).toEqual([
      expect.stringMatching(/^FEISHU_ENCRYPT_KEY: set, but PUBLIC_URL and ACK_SECRET are not/),
    ]);
    expect(problems({ ...APP, ...ACK, FEISHU_VERIFICATION_TOKEN: 'verification-token-01' })).toEqual([
      'FEISHU_VERIFICATION_TOKEN: set, but FEISHU_ENCRYPT_KEY is not (callbacks are refused without it)',
    ]);
  });

  it('the app secret and the callback keys may live in the settings secret', () => {
    for (const name of ['FEISHU_APP_SECRET', 'FEISHU_ENCRYPT_KEY', 'FEISHU_VERIFICATION_TOKEN'])
      expect(SECRET_SETTINGS).toContain(name);
  });

  it('routing file: feishu-app instances with mention and urgent; urgent needs people mentioned and escalation on', () => {
    const good = routingFile(`
channels:
  team: { type: feishu-app, chatId: ${CHAT}, mention: [ou_7d8a6e6df7621556ce0d21922b676706, zhang@example.com], urgent: phone }
default: { channels: [team] }
`);
    const config = loadConfig({
      ...APP,
      ROUTING_FILE: good,
      ESCALATION_SNS_TOPIC_ARN: 'arn:aws:sns:eu-west-1:123456789012:esc',
      ...ACK,
    });
    expect(config.routing?.channels).toEqual([
      expect.objectContaining({ name: 'team', type: 'feishu-app', urgent: 'phone', chatId: CHAT }),
    ]);
    expect(problems({ ...APP, ROUTING_FILE: good })).toEqual([
      expect.stringMatching(/^ROUTING_FILE: channels\.team\.urgent: set, but escalation is off/),
    ]);
    const bad = routingFile(`
channels:
  team: { type: feishu-app, chatId: ${CHAT}, mention: ['@all', 'U012AB3CD'], urgent: sms }
  bot: { type: feishu, webhookUrl: { secret: HOOK }, mention: [a@b.io] }
default: { channels: [team] }
`);
    const found = problems({ ...APP, HOOK: 'https://open.feishu.cn/open-apis/bot/v2/hook/x', ROUTING_FILE: bad });
    expect(found).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /channels\.team\.mention\[1\]: must be an open_id \(ou_…\), user_id:<user id>, an email or @all/,
        ),
        expect.stringMatching(/channels\.bot\.mention\[0\]: .*custom bot cannot look an email up/),
      ]),
    );
    const noApp = routingFile(`
channels:
  team: { type: feishu-app, chatId: ${CHAT} }
default: { channels: [team] }
`);
    expect(problems({ ROUTING_FILE: noApp })).toEqual([
      expect.stringMatching(/channels\.team\.type: a feishu-app channel sends with the app of FEISHU_APP_ID/),
    ]);
  });

  it("routing file: a route's mention must be rendered by one of its channels", () => {
    const file = routingFile(`
channels:
  team: { type: feishu-app, chatId: ${CHAT} }
  pager: { type: sns, topicArn: arn:aws:sns:eu-west-1:123456789012:pager }
routes:
  - matchers: ['severity="critical"']
    channels: [team, pager]
    mention: [zhang@example.com, U012AB3CD, nobody]
  - matchers: ['severity="warning"']
    channels: [pager]
    mention: ['@all']
default: { channels: [team] }
`);
    const found = problems({ ...APP, ROUTING_FILE: file });
    expect(found).toEqual([
      expect.stringMatching(/routes\[0\]\.mention\[1\]: no channel of this route can mention "U012AB3CD"/),
      expect.stringMatching(/routes\[0\]\.mention\[2\]: "nobody" is not a mention/),
      expect.stringMatching(
        /routes\[1\]\.mention\[0\]: no channel of this route can mention "@all" \(none of its channels/,
      ),
    ]);
  });
});
