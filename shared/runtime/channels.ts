/**
 * The active channels, from the configuration alone: the environment's channels, then the routing
 * file's (each built by its type in `shared/channels/registry.ts`).
 */
import { SNSClient } from '@aws-sdk/client-sns';
import type { Channel } from '../channels/channel.js';
import { createConsoleChannel } from '../channels/console.js';
import { createFeishuChannel } from '../channels/feishu/index.js';
import { pagerDutyChannel } from '../channels/pagerduty/settings.js';
import { createChannel } from '../channels/registry.js';
import { createSlackChannel } from '../channels/slack/index.js';
import { createSnsChannel, regionFromTopicArn } from '../channels/sns/index.js';
import type { Config } from './config.js';
import { createSlackAppInstance } from '../channels/slack/app-settings.js';
import type { SlackThreadStore } from '../store/slack-threads.js';

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
  /** Problems that do not fail a delivery (a Slack thread that could not be stored). */
  warn?: (message: string, fields: Record<string, unknown>) => void;
}

/**
 * Builds the configured channels: first those of the environment variables, in this order: `slack`
 * (the webhook, or the Slack app of `SLACK_CHANNEL`), `feishu`, `sns`, `pagerduty`; then the routing file's instances, in file order. When none is configured,
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
  const slackApp = deps.slackThreads && { threads: deps.slackThreads, apiUrl: config.slackApp?.apiUrl, timeoutMs: config.delivery.timeoutMs, warn: deps.warn ?? (() => undefined) };
  const create = { snsClient, write: deps.write, now: deps.now, slackApp };
  const app = config.slackApp;
  if (app?.token && app.channel) {
    channels.push(createSlackAppInstance({ name: 'slack', type: 'slack-app', channel: app.channel, token: app.token, settings: { token: 'SLACK_BOT_TOKEN', channel: 'SLACK_CHANNEL' } }, create));
  }
  if (config.feishu) {
    channels.push(createFeishuChannel({ webhookUrl: config.feishu.webhookUrl, secret: config.feishu.secret, now: deps.now }));
  }
  if (config.sns) channels.push(createSnsChannel({ client: snsClient(config.sns.topicArn), topicArn: config.sns.topicArn }));
  if (config.pagerduty) channels.push(pagerDutyChannel({ routingKey: config.pagerduty.routingKey, eventsUrl: config.pagerdutyEventsUrl }));
  for (const instance of config.routing?.channels ?? []) channels.push(createChannel(instance, create));
  return channels.length ? channels : [createConsoleChannel(deps.write)];
}
