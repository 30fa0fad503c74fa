/**
 * The active channels, from the configuration alone: the environment's channels, then the routing
 * file's (each built by its type in `shared/channels/registry.ts`).
 */
import { SNSClient } from '@aws-sdk/client-sns';
import type { Channel } from '../channels/channel.js';
import { createConsoleChannel } from '../channels/console.js';
import { createFeishuChannel } from '../channels/feishu/index.js';
import { createChannel } from '../channels/registry.js';
import { createSlackChannel } from '../channels/slack/index.js';
import { createSnsChannel, regionFromTopicArn } from '../channels/sns/index.js';
import type { Config } from './config.js';

/** What the channels need from outside the configuration (tests inject these). */
export interface ChannelDeps {
  /** SNS client for every topic; by default one per topic region, with SDK retries off (the pipeline retries). */
  sns?: SNSClient;
  /** Console output (default: stdout). */
  write?: (s: string) => void;
  /** Clock for Feishu signatures. */
  now?: () => Date;
}

/**
 * Builds the configured channels: first those of the environment variables, in this order: `slack`,
 * `feishu`, `sns`; then the routing file's instances, in file order. When none is configured,
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
  if (config.feishu) {
    channels.push(createFeishuChannel({ webhookUrl: config.feishu.webhookUrl, secret: config.feishu.secret, now: deps.now }));
  }
  if (config.sns) channels.push(createSnsChannel({ client: snsClient(config.sns.topicArn), topicArn: config.sns.topicArn }));
  for (const instance of config.routing?.channels ?? []) channels.push(createChannel(instance, { snsClient, write: deps.write, now: deps.now }));
  return channels.length ? channels : [createConsoleChannel(deps.write)];
}
