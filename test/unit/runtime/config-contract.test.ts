/**
 * The settings are a public contract: every name, its default, its parsing and every start-up error
 * message. This pins them for environments that set every setting (one with the Slack webhook, one with
 * the Slack app) and for environments that are refused, as snapshots: a change to how the configuration
 * is assembled must leave them as they are. Settings may be added (a new channel's), so the names are
 * checked as "still there", and the refused environments set only the settings pinned here. The channels the environment configures are pinned by what
 * they send (`test/integration/channels/env-channels.test.ts`), so this view leaves them out.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Secret } from '../../../shared/core/secret.js';
import { type Config, loadConfig, SETTING_NAMES } from '../../../shared/runtime/config.js';
import { SECRET_SETTINGS } from '../../../shared/runtime/settings-secret.js';
import { configProblems } from '../../helpers/config.js';
import { FULL_ENV, ROUTING_FILE_TEXT, SLACK_APP_ENV } from '../../helpers/full-env.js';

expect.addSnapshotSerializer({
  test: (v) => v instanceof Secret,
  serialize: (v: Secret) => `Secret(${JSON.stringify(v.reveal())})`,
});

const dir = mkdtempSync(join(tmpdir(), 'config-contract-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const routingFile = join(dir, 'routing.yml');
writeFileSync(routingFile, ROUTING_FILE_TEXT);

/** Every setting there was when this contract was written: a setting may be added, never removed or renamed. */
const CONTRACT_SETTING_NAMES = [
  'ACK_SECRET',
  'ACK_SECRET_PREVIOUS',
  'ACK_SECRET_PREVIOUS_UNTIL',
  'ACK_TOKEN_TTL_SECONDS',
  'ALERTMANAGER_URL',
  'ALLOW_UNAUTHENTICATED',
  'DEDUPE_LEASE_MS',
  'DEDUPE_TTL_SECONDS',
  'DELIVERY_RETRIES',
  'DELIVERY_TIMEOUT_MS',
  'ENRICHMENT_TIMEOUT_MS',
  'ESCALATION_DEAD_LETTER_QUEUE_ARN',
  'ESCALATION_DELAY_SECONDS',
  'ESCALATION_FUNCTION_ARN',
  'ESCALATION_ROLE_ARN',
  'ESCALATION_SCHEDULE_GROUP',
  'ESCALATION_SLACK_WEBHOOK_URL',
  'ESCALATION_SNS_TOPIC_ARN',
  'FEISHU_API_URL',
  'FEISHU_APP_ID',
  'FEISHU_APP_SECRET',
  'FEISHU_CHAT_ID',
  'FEISHU_ENCRYPT_KEY',
  'FEISHU_SECRET',
  'FEISHU_VERIFICATION_TOKEN',
  'FEISHU_WEBHOOK_URL',
  'GPU_MEMORY_CAPACITY_MIB',
  'GRAFANA_URL',
  'HEARTBEAT_ALERTNAME',
  'HEARTBEAT_TIMEOUT_SECONDS',
  'LOG_LEVEL',
  'MEMORY_SERIES',
  'MEMORY_SERIES_UNIT',
  'MEMORY_TREND_WINDOW_HOURS',
  'PAGERDUTY_EVENTS_URL',
  'PAGERDUTY_ROUTING_KEY',
  'PORT',
  'PROMETHEUS_QUERY_TIMEOUT_MS',
  'PROMETHEUS_URL',
  'PUBLIC_URL',
  'ROUTING_FILE',
  'SLACK_API_URL',
  'SLACK_BOT_TOKEN',
  'SLACK_CHANNEL',
  'SLACK_SIGNING_SECRET',
  'SLACK_WEBHOOK_URL',
  'SNS_TOPIC_ARN',
  'TABLE_NAME',
  'WEBHOOK_TOKEN',
  'WEBHOOK_TOKEN_PREVIOUS',
];

/** Every setting the settings secret could hold when this contract was written. */
const CONTRACT_SECRET_SETTINGS = [
  'ACK_SECRET',
  'ACK_SECRET_PREVIOUS',
  'ACK_SECRET_PREVIOUS_UNTIL',
  'ESCALATION_SLACK_WEBHOOK_URL',
  'FEISHU_APP_SECRET',
  'FEISHU_ENCRYPT_KEY',
  'FEISHU_SECRET',
  'FEISHU_VERIFICATION_TOKEN',
  'FEISHU_WEBHOOK_URL',
  'PAGERDUTY_ROUTING_KEY',
  'SLACK_BOT_TOKEN',
  'SLACK_SIGNING_SECRET',
  'SLACK_WEBHOOK_URL',
  'WEBHOOK_TOKEN',
  'WEBHOOK_TOKEN_PREVIOUS',
];

/** The configuration without the channels the environment configures (pinned by what they send). */
function view(config: Config) {
  const { envChannels: _channels, channelOptions, escalation, routing, ...rest } = config;
  const slackApp = channelOptions['slack-app'];
  return {
    ...rest,
    slackInteractions: { signingSecret: slackApp?.signingSecret, apiUrl: slackApp?.apiUrl },
    feishuApp: channelOptions['feishu-app'],
    escalation: escalation && { delaySeconds: escalation.delaySeconds, scheduler: escalation.scheduler },
    routing: routing && {
      ...routing,
      file: routing.file === routingFile ? '<ROUTING_FILE>' : routing.file,
      // The compiled RE2 of a regex matcher is the engine's, not ours.
      routes: routing.routes.map((r) => ({
        ...r,
        matchers: r.matchers.map(({ name, type, value }) => ({ name, type, value })),
      })),
    },
  };
}

describe('the settings contract', () => {
  it('still names every setting and secret setting', () => {
    expect(SETTING_NAMES).toEqual(expect.arrayContaining(CONTRACT_SETTING_NAMES));
    expect(SECRET_SETTINGS).toEqual(expect.arrayContaining(CONTRACT_SECRET_SETTINGS));
    // A secret stays a secret; a setting that was not one does not become one unnoticed.
    const secrets = new Set<string>(SECRET_SETTINGS);
    expect(CONTRACT_SETTING_NAMES.filter((n) => secrets.has(n))).toEqual(CONTRACT_SECRET_SETTINGS);
  });

  it('reads every setting of a full environment (Slack webhook) as before', () => {
    expect(view(loadConfig({ ...FULL_ENV, ROUTING_FILE: routingFile }))).toMatchSnapshot();
  });

  it('reads every setting of a full environment (Slack app) as before', () => {
    expect(view(loadConfig({ ...SLACK_APP_ENV, ROUTING_FILE: routingFile }))).toMatchSnapshot();
  });

  it('reads the defaults of an empty environment as before', () => {
    expect(view(loadConfig({}))).toMatchSnapshot();
  });

  it('refuses bad values with the same messages', () => {
    // Sorted: the order of the list follows how the schema is assembled, the messages are the contract.
    for (const value of ['http://user:pw@bad value#', 'http://user:pw@example.com/x?y#z', '-1', 'x'.repeat(300)]) {
      const bad = Object.fromEntries(CONTRACT_SETTING_NAMES.map((name) => [name, value]));
      expect(configProblems(bad).sort()).toMatchSnapshot();
    }
  });

  it('refuses settings that only make sense together with the same messages', () => {
    const refused: Record<string, string>[] = [
      { FEISHU_SECRET: 'sign' },
      { SLACK_CHANNEL: 'C0ALERTS01' },
      { SLACK_CHANNEL: 'C0ALERTS01', SLACK_BOT_TOKEN: SLACK_APP_ENV.SLACK_BOT_TOKEN!, ...pick('SLACK_WEBHOOK_URL') },
      { SLACK_SIGNING_SECRET: 'signing-secret-0123456789' },
      { WEBHOOK_TOKEN_PREVIOUS: FULL_ENV.WEBHOOK_TOKEN_PREVIOUS! },
      { ACK_SECRET_PREVIOUS: FULL_ENV.ACK_SECRET_PREVIOUS! },
      { ACK_SECRET_PREVIOUS_UNTIL: '2026-12-01T00:00:00Z' },
      { ...pick('ESCALATION_SNS_TOPIC_ARN') },
      { ...pick('ESCALATION_SLACK_WEBHOOK_URL', 'ESCALATION_SNS_TOPIC_ARN', 'PUBLIC_URL') },
      { ...pick('ESCALATION_SCHEDULE_GROUP') },
      { ...pick('ESCALATION_DEAD_LETTER_QUEUE_ARN') },
      { PROMETHEUS_QUERY_TIMEOUT_MS: '3000', ENRICHMENT_TIMEOUT_MS: '2000' },
      { ...pick('SLACK_WEBHOOK_URL'), ROUTING_FILE: routingFileWith('slack: { type: console }') },
      { ...pick('PAGERDUTY_ROUTING_KEY'), ROUTING_FILE: routingFileWith('pagerduty: { type: console }') },
      { ROUTING_FILE: routingFileWith('x: { type: slack-app, channel: C1 }') },
      { ROUTING_FILE: routingFileWith('x: { type: sns }') },
      { ...pick('FEISHU_APP_ID') },
      { ...pick('FEISHU_APP_SECRET', 'FEISHU_API_URL') },
      {
        FEISHU_CHAT_ID: SLACK_APP_ENV.FEISHU_CHAT_ID!,
        ...pick('FEISHU_APP_ID', 'FEISHU_APP_SECRET', 'FEISHU_WEBHOOK_URL'),
      },
      { ...pick('FEISHU_APP_ID', 'FEISHU_APP_SECRET', 'FEISHU_VERIFICATION_TOKEN') },
      { ...pick('FEISHU_APP_ID', 'FEISHU_APP_SECRET', 'FEISHU_ENCRYPT_KEY', 'PUBLIC_URL') },
      { ROUTING_FILE: routingFileWith('x: { type: feishu-app, chatId: oc_0a1b2c3d4e5f60718293a4b5 }') },
      {
        ...pick('FEISHU_APP_ID', 'FEISHU_APP_SECRET'),
        ROUTING_FILE: routingFileWith(
          "x: { type: feishu-app, chatId: oc_0a1b2c3d4e5f60718293a4b5, mention: ['ou_7d8a6e6df7621556ce0d21922b676706ccs'], urgent: sms }",
        ),
      },
      {
        FEISHU_CHAT_ID: SLACK_APP_ENV.FEISHU_CHAT_ID!,
        ...pick('FEISHU_APP_ID', 'FEISHU_APP_SECRET'),
        ROUTING_FILE: routingFileWith('feishu: { type: console }'),
      },
    ];
    expect(refused.map((env) => configProblems(env).map((p) => p.replaceAll(dir, '<dir>')))).toMatchSnapshot();
  });
});

/** The named settings of {@link FULL_ENV}. */
function pick(...names: string[]): Record<string, string> {
  return Object.fromEntries(names.map((n) => [n, FULL_ENV[n]!]));
}

let files = 0;
/** A routing file with one channel entry, sent to by default. */
function routingFileWith(entry: string): string {
  const path = join(dir, `routing-${++files}.yml`);
  const name = entry.split(':')[0]!;
  writeFileSync(path, `channels:\n  ${entry}\ndefault: { channels: [${name}] }\n`);
  return path;
}
