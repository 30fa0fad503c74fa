import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../shared/runtime/config.js';
import {
  describeRoutingFile,
  loadRoutingFile,
  RoutingError,
  routingSecretNames,
} from '../../../shared/routing/load.js';
import { withSecretSettings } from '../../../shared/runtime/settings-secret.js';

const dir = mkdtempSync(join(tmpdir(), 'routing-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const file = (text: string, ext = 'yml') => {
  const path = join(dir, `r${++files}.${ext}`);
  writeFileSync(path, text);
  return path;
};

const SETTINGS = {
  SLACK_PLATFORM: 'https://hooks.slack.com/services/T1/B1/platform-secret',
  FEISHU_QWEN: 'https://open.feishu.cn/open-apis/bot/v2/hook/qwen-secret',
  FEISHU_QWEN_SIGN: 'sign-secret',
  SNS_TOPIC_ARN: 'arn:aws:sns:eu-west-1:123456789012:stack-topic',
};

const GOOD = `
channels:
  pager: { type: sns, messageStructure: json }
  audit: { type: sns, topicArn: arn:aws:sns:us-east-1:123456789012:audit.fifo, locale: zh-CN }
  platform: { type: slack, webhookUrl: { secret: SLACK_PLATFORM }, digestAbove: 20 }
  qwen: { type: feishu, webhookUrl: { secret: FEISHU_QWEN }, signingSecret: { secret: FEISHU_QWEN_SIGN } }
routes:
  - matchers: ['{severity="critical", kind=~"kv_cache|error_rate"}']
    channels: [pager, platform]
  - matchers: ['model_name="qwen3-8b"']
    channels: [qwen]
    continue: true
default:
  channels: [platform]
flapping: { window: 15m }
`;

/** The problems of a file that must not load. */
function problems(text: string, settings: Record<string, string> = SETTINGS, envChannels: string[] = []): string[] {
  const path = file(text);
  try {
    loadRoutingFile(path, { settings, envChannels });
  } catch (err) {
    expect(err).toBeInstanceOf(RoutingError);
    return (err as RoutingError).problems.map((p) => p.replace(`${path}:`, 'FILE:'));
  }
  throw new Error('loaded');
}

describe('loadRoutingFile', () => {
  it('resolves channel instances, routes, default and flap window', () => {
    const routing = loadRoutingFile(file(GOOD), { settings: SETTINGS });
    expect(routing.channels.map((c) => [c.name, c.type])).toEqual([
      ['pager', 'sns'],
      ['audit', 'sns'],
      ['platform', 'slack'],
      ['qwen', 'feishu'],
    ]);
    expect(routing.channels[0]).toMatchObject({ topicArn: SETTINGS.SNS_TOPIC_ARN, messageStructure: 'json' });
    expect(routing.channels[1]).toMatchObject({
      topicArn: 'arn:aws:sns:us-east-1:123456789012:audit.fifo',
      locale: 'zh-CN',
    });
    const platform = routing.channels[2]!;
    expect(platform.type === 'slack' && platform.webhookUrl.reveal()).toBe(SETTINGS.SLACK_PLATFORM);
    expect(JSON.stringify(routing)).not.toContain('secret');
    expect(routing.routes[0]!.matchers.map((m) => m.name)).toEqual(['severity', 'kind']);
    expect(routing.routes[1]!.continue).toBe(true);
    expect(routing.defaultChannels).toEqual(['platform']);
    expect(routing.flapWindowMs).toBe(15 * 60_000);
  });

  it('reads the same file written as JSON', () => {
    const json = JSON.stringify(
      {
        channels: { platform: { type: 'slack', webhookUrl: { secret: 'SLACK_PLATFORM' } } },
        default: { channels: ['platform'] },
      },
      null,
      2,
    );
    expect(loadRoutingFile(file(json, 'json'), { settings: SETTINGS }).channels[0]!.name).toBe('platform');
  });

  it('names the line and field of every schema problem at once', () => {
    expect(
      problems(`channels:
  team:
    type: feishu
    webhookUrl: { secret: FEISHU_QWEN }
    locale: fr
  bad:
    type: teams
  big: { type: slack, webhookUrl: { secret: SLACK_PLATFORM }, digestAbove: 51 }
routes:
  - matchers: ['kind=~"(kv"']
    channels: [team]
  - matchers: ['model_name="qwen3-8b"']
    channels: [team]
    continu: true
default:
  channels: [team]
flapping: { window: 30x }
`),
    ).toEqual([
      'FILE:5: channels.team.locale: must be one of en, zh-CN',
      // Every type of the registry, in its order (a new channel type adds its name at the end).
      expect.stringMatching(
        /^FILE:7: channels\.bad\.type: type must be one of slack, slack-app, feishu, feishu-app, dingtalk, wecom, sns, console, pagerduty\b/,
      ),
      'FILE:8: channels.big.digestAbove: must be an integer 1–50',
      'FILE:10: routes[0].matchers[0]: "kind=~\\"(kv\\"": invalid regular expression: error parsing regexp: missing closing ): `^(?:(kv)$`',
      'FILE:14: routes[1].continu: Unrecognized key: "continu"',
      'FILE:17: flapping.window: must be a duration such as 30m, 1h or 0s',
    ]);
  });

  it('reads what a file leaves out: no routes, a route without matchers (matches every alert) or continue (false)', () => {
    const none = loadRoutingFile(file('channels:\n  a: { type: console }\ndefault: { channels: [a] }\n'), {
      settings: SETTINGS,
      envChannels: [],
    });
    expect(none.routes).toEqual([]);
    const bare = loadRoutingFile(
      file('channels:\n  a: { type: console }\nroutes:\n  - channels: [a]\ndefault: { channels: [a] }\n'),
      { settings: SETTINGS, envChannels: [] },
    );
    expect(bare.routes).toEqual([{ matchers: [], channels: ['a'], continue: false }]);
  });

  // These words come from zod (`shared/core/zod.ts` loads its English messages into zod/mini).
  it("names a field of the wrong type in zod's English words", () => {
    expect(
      problems(`channels:
  a: { type: console, digestAbove: "3" }
  b: { type: slack, webhookUrl: { secret: 1 } }
routes:
  - matchers: 'a="b"'
    channels: a
    continue: "yes"
default: { channels: [a] }
flapping: { window: 30 }
`),
    ).toEqual([
      'FILE:2: channels.a.digestAbove: Invalid input: expected number, received string',
      'FILE:3: channels.b.webhookUrl.secret: Invalid input: expected string, received number',
      'FILE:5: routes[0].matchers: Invalid input: expected array, received string',
      'FILE:6: routes[0].channels: Invalid input: expected array, received string',
      'FILE:7: routes[0].continue: Invalid input: expected boolean, received string',
      'FILE:9: flapping.window: Invalid input: expected string, received number',
    ]);
  });

  it('names the line of a YAML syntax error and of a duplicate key', () => {
    expect(problems('channels:\n  a:\n    type: slack\n   bad: 1\ndefault: []\n')).toEqual([
      'FILE:4: All mapping items must start at the same column',
    ]);
    expect(problems('channels: {}\ndefault: { channels: [] }\nchannels: {}\n')).toEqual([
      'FILE:3: Map keys must be unique',
    ]);
  });

  describe('a syntax error on a line holding a pasted secret URL', () => {
    const URL = 'https://hooks.slack.com/services/T000/B000/XXXXXXXX';
    const head = 'channels:\n  s:\n    type: slack\n';
    it.each([
      ['an unclosed flow map', `channels:\n  s: { type: slack, webhookUrl: ${URL}\ndefault: { channels: [s] }\n`],
      ['an unclosed quote', `${head}    webhookUrl: "${URL}\n`],
      ['an unclosed flow sequence', `${head}    webhookUrl: [${URL}\n`],
      ['an unknown tag', `${head}    webhookUrl: !${URL}\n`],
      ['a tag before the URL', `${head}    webhookUrl: !secret ${URL}\n`],
      ['a block scalar header', `${head}    webhookUrl: |${URL}\n      x\n`],
      ['a directive', `%YAML ${URL}\n---\n${head}`],
      ['an alias to no anchor', `${head}    webhookUrl: *XXXXXXXX\n`],
      ['a bad escape', `${head}    webhookUrl: "${URL}\\q"\n`],
      ['a value after the quote', `${head}    webhookUrl: '${URL}'x\n`],
      ['a reserved character', `${head}    webhookUrl: @${URL}\n`],
      ['a URL as a map key', `channels:\n  ${URL}: { type: slack }\ndefault: { channels: [s] }\n`],
      [
        'a URL as an unknown field',
        `${head}    webhookUrl: { secret: SLACK }\n    ${URL}: 1\ndefault: { channels: [s] }\n`,
      ],
    ])('names the line but not the secret: %s', (_case, text) => {
      const list = problems(text, { SLACK: URL });
      expect(list.length).toBeGreaterThan(0);
      expect(list.every((p) => /^FILE(:\d+)?: /.test(p))).toBe(true);
      expect(list.join('\n')).not.toMatch(/xxxxxxxx|hooks\.slack|services\/T000|%2F/i);
    });
  });

  it('names unknown channels where a route references them, and a name the environment already uses', () => {
    const text = `channels:
  slack: { type: slack, webhookUrl: { secret: SLACK_PLATFORM } }
routes:
  - channels: [slack, oncal]
default:
  channels: [sns, nobody]
`;
    expect(problems(text, SETTINGS, ['slack', 'sns'])).toEqual([
      'FILE:2: channels.slack: "slack" is already defined by the environment (SLACK_… settings); pick another name',
      'FILE:4: routes[0].channels[1]: no channel named "oncal" (known: slack, sns)',
      'FILE:6: default.channels[1]: no channel named "nobody" (known: slack, sns)',
    ]);
  });

  it('names a missing or malformed secret setting without echoing its value', () => {
    const text = `channels:
  a: { type: slack, webhookUrl: { secret: SLACK_MISSING } }
  b: { type: feishu, webhookUrl: { secret: PLAIN_HTTP } }
  c: { type: sns }
default: { channels: [a] }
`;
    const list = problems(text, { PLAIN_HTTP: 'http://hooks.example.com/secret-path' });
    expect(list).toEqual([
      'FILE:2: channels.a.webhookUrl: setting SLACK_MISSING is not set (an environment variable, or a key of the settings secret in AWS)',
      'FILE:3: channels.b.webhookUrl: setting PLAIN_HTTP must be an https URL (http only to loopback)',
      'FILE:4: channels.c.topicArn: not given, and SNS_TOPIC_ARN is not set to a topic ARN',
    ]);
    expect(list.join('\n')).not.toContain('secret-path');
  });

  it('rejects a literal URL where a secret reference belongs', () => {
    const [problem] = problems(
      'channels:\n  a: { type: slack, webhookUrl: "https://hooks.slack.com/services/T/B/x" }\ndefault: { channels: [a] }\n',
    );
    expect(problem).toMatch(/^FILE:2: channels\.a\.webhookUrl: must be \{ secret: SETTING_NAME \}/);
    expect(problem).not.toContain('hooks.slack.com');
  });

  it('says what a missing default route is for', () => {
    expect(
      problems('channels:\n  a: { type: sns, topicArn: "arn:aws:sns:us-east-1:123456789012:t" }\n'),
    ).toContainEqual(expect.stringMatching(/default: is required: default: \{ channels: \[NAME, \.\.\.\] \}/));
  });

  it('reports a file it cannot read and a file with no channel', () => {
    expect(() => loadRoutingFile(join(dir, 'missing.yml'), { settings: {} })).toThrow(
      /missing\.yml: cannot read the file \(ENOENT\)/,
    );
    expect(problems('channels: {}\ndefault: { channels: [] }\n')).toEqual([
      expect.stringMatching(/^FILE:2: default\.channels: names no channel/),
      'FILE:1: channels: declares no channel',
    ]);
  });
});

describe('loadConfig with ROUTING_FILE', () => {
  it('keeps the environment channels and adds the file instances', () => {
    const config = loadConfig({
      ...SETTINGS,
      ROUTING_FILE: file(GOOD),
      SLACK_WEBHOOK_URL: 'https://hooks.slack.com/services/T/B/env',
    });
    expect(config.envChannels.map((c) => c.name)).toEqual(['slack', 'sns']);
    expect(config.routing?.channels.map((c) => c.name)).toEqual(['pager', 'audit', 'platform', 'qwen']);
  });

  it('prefixes the file problems with ROUTING_FILE', () => {
    const path = file('channels:\n  a: { type: slack, webhookUrl: { secret: NOPE } }\ndefault: { channels: [a] }\n');
    const err = (() => {
      try {
        loadConfig({ ROUTING_FILE: path });
      } catch (e) {
        return e as ConfigError;
      }
    })();
    expect(err).toBeInstanceOf(ConfigError);
    expect(err!.problems).toEqual([
      `ROUTING_FILE: ${path}:2: channels.a.webhookUrl: setting NOPE is not set (an environment variable, or a key of the settings secret in AWS)`,
    ]);
  });
});

describe('routingSecretNames and describeRoutingFile', () => {
  it('lists the channel instances, the settings to put in the secret and the topics to publish to', () => {
    const path = file(GOOD);
    expect(routingSecretNames(path)).toEqual(['SLACK_PLATFORM', 'FEISHU_QWEN', 'FEISHU_QWEN_SIGN']);
    expect(describeRoutingFile(path)).toEqual({
      channelNames: ['pager', 'audit', 'platform', 'qwen'],
      snsTopics: { pager: undefined, audit: 'arn:aws:sns:us-east-1:123456789012:audit.fifo' },
      topicArns: ['arn:aws:sns:us-east-1:123456789012:audit.fifo'],
      secretNames: ['SLACK_PLATFORM', 'FEISHU_QWEN', 'FEISHU_QWEN_SIGN'],
      usesDefaultTopic: true,
    });
    expect(routingSecretNames(join(dir, 'missing.yml'))).toEqual([]);
  });

  it('refuses at synth a route or default naming no instance; names the environment may define pass', () => {
    const typo = file(`
channels:
  oncall-slack: { type: slack, webhookUrl: { secret: SLACK_ONCALL } }
routes:
  - matchers: ['severity="critical"']
    channels: [oncall-slak, pagerduty]
default:
  channels: [slack, oncall-pg]
`);
    expect(() => describeRoutingFile(typo)).toThrow(RoutingError);
    expect(() => describeRoutingFile(typo)).toThrow(/:6: routes\[0\]\.channels\[0\]: no channel named "oncall-slak"/);
    expect(() => describeRoutingFile(typo)).toThrow(/:8: default\.channels\[1\]: no channel named "oncall-pg"/);
    expect(() => describeRoutingFile(typo)).not.toThrow(/"pagerduty"|"slack"/);
  });

  it('lets the settings secret provide exactly the keys the file references (AWS)', async () => {
    const secret = JSON.stringify({
      SLACK_PLATFORM: 'https://hooks.slack.com/services/T/B/from-secret',
      FEISHU_QWEN: 'https://open.feishu.cn/hook/q',
      FEISHU_QWEN_SIGN: 's',
      UNRELATED: 'x',
    });
    const client = { send: async () => ({ SecretString: secret }) };
    const env = await withSecretSettings(
      {
        SETTINGS_SECRET_ARN: 'arn:aws:secretsmanager:eu-west-1:1:secret:s',
        ROUTING_FILE: file(GOOD),
        SNS_TOPIC_ARN: SETTINGS.SNS_TOPIC_ARN,
      },
      client as never,
    );
    expect(env.SLACK_PLATFORM).toBe('https://hooks.slack.com/services/T/B/from-secret');
    expect(env.UNRELATED).toBeUndefined();
    const platform = loadConfig(env).routing!.channels.find((c) => c.name === 'platform')!;
    expect(platform.type === 'slack' && platform.webhookUrl.reveal()).toBe(
      'https://hooks.slack.com/services/T/B/from-secret',
    );
  });
});
