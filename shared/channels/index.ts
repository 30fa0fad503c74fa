/**
 * The one explicit list of channels: which are active follows from the configuration alone.
 */
import { SNSClient } from '@aws-sdk/client-sns';
import type { Config } from '../config.js';
import type { ChannelInstance } from '../routing/load.js';
import { createConsoleChannel } from './console.js';
import { createFeishuChannel } from './feishu.js';
import { createSlackChannel } from './slack.js';
import { createSlackAppChannel } from './slack/app-channel.js';
import type { SlackThreadStore } from './slack/threads.js';
import { createSlackApi, type SlackSettingNames } from './slack/web-api.js';
import { createSnsChannel, regionFromTopicArn } from './sns.js';
import type { Channel } from './types.js';
import type { Locale } from './locale.js';
import type { Secret } from '../secret.js';

/** What the channels need from outside the configuration (tests inject these). */
export interface ChannelDeps {
  /** SNS client for every topic; by default one per topic region, with SDK retries off (the pipeline retries). */
  sns?: SNSClient;
  /** Console output (default: stdout). */
  write?: (s: string) => void;
  /** Clock for Feishu signatures. */
  now?: () => Date;
  /** Where Slack-app channels keep their threads (required when one is configured). */
  slackThreads?: SlackThreadStore;
  /** Per-request time-out of the Slack Web API client, milliseconds (default 5,000; the delivery's signal ends it first). */
  slackTimeoutMs?: number;
  /** Problems that do not fail a delivery (a Slack thread that could not be stored). */
  warn?: (message: string, fields: Record<string, unknown>) => void;
}

/**
 * Builds the configured channels: first those of the environment variables, in this order: `slack`
 * (the webhook, or the Slack app of `SLACK_CHANNEL`), `feishu`, `sns`; then the routing file's instances, in file order. When none is configured,
 * `[console]`. An SNS client's region is its topic ARN's (SNS topics are regional), passed
 * explicitly; credentials and `AWS_ENDPOINT_URL_SNS` are the SDK's own settings.
 * @throws Error when an SNS topic ARN has no region field
 */
export function buildChannels(config: Config, deps: ChannelDeps = {}): Channel[] {
  const channels: Channel[] = [];
  const clients = new Map<string, SNSClient>();
  const snsClient = (topicArn: string) => {
    if (deps.sns) return deps.sns;
    const region = regionFromTopicArn(topicArn);
    if (!clients.has(region)) clients.set(region, new SNSClient({ region, maxAttempts: 1 }));
    return clients.get(region)!;
  };
  if (config.slack) channels.push(createSlackChannel({ webhookUrl: config.slack.webhookUrl }));
  const app = config.slackApp;
  if (app?.token && app.channel) channels.push(slackApp(config, deps, { name: 'slack', channel: app.channel, token: app.token }, { token: 'SLACK_BOT_TOKEN', channel: 'SLACK_CHANNEL' }));
  if (config.feishu) {
    channels.push(createFeishuChannel({ webhookUrl: config.feishu.webhookUrl, secret: config.feishu.secret, now: deps.now }));
  }
  if (config.sns) channels.push(createSnsChannel({ client: snsClient(config.sns.topicArn), topicArn: config.sns.topicArn }));
  for (const instance of config.routing?.channels ?? []) channels.push(fromInstance(instance, snsClient, deps, config));
  return channels.length ? channels : [createConsoleChannel(deps.write)];
}

/** A Slack-app channel: Web API client, thread store, and the names of the settings its errors point at. */
function slackApp(config: Config, deps: ChannelDeps, c: { name: string; channel: string; token: Secret; locale?: Locale; digestAbove?: number }, settings: SlackSettingNames): Channel {
  if (!deps.slackThreads) throw new Error(`${c.name}: a Slack-app channel needs a thread store (ChannelDeps.slackThreads)`);
  const api = createSlackApi({ name: c.name, token: c.token, apiUrl: config.slackApp?.apiUrl, timeoutMs: deps.slackTimeoutMs ?? config.delivery.timeoutMs, settings });
  const now = deps.now ?? (() => new Date());
  return createSlackAppChannel({ ...c, api, threads: deps.slackThreads, warn: deps.warn ?? (() => undefined), now: () => now().getTime() });
}

function fromInstance(c: ChannelInstance, snsClient: (topicArn: string) => SNSClient, deps: ChannelDeps, config: Config): Channel {
  const render = { name: c.name, locale: c.locale, digestAbove: c.digestAbove };
  switch (c.type) {
    case 'slack':
      return createSlackChannel({ ...render, webhookUrl: c.webhookUrl });
    case 'slack-app':
      return slackApp(config, deps, { ...render, channel: c.channel, token: c.token }, { token: c.tokenSetting, channel: `ROUTING_FILE channels.${c.name}.channel` });
    case 'feishu':
      return createFeishuChannel({ ...render, webhookUrl: c.webhookUrl, secret: c.signingSecret, now: deps.now });
    case 'sns':
      return createSnsChannel({ ...render, client: snsClient(c.topicArn), topicArn: c.topicArn, messageStructure: c.messageStructure });
    case 'console':
      return createConsoleChannel(deps.write, render);
  }
}
