/**
 * The one explicit list of channels: which are active follows from the configuration alone.
 */
import { SNSClient } from '@aws-sdk/client-sns';
import type { Config } from '../config.js';
import { createConsoleChannel } from './console.js';
import { createFeishuChannel } from './feishu.js';
import { createSlackChannel } from './slack.js';
import { createSnsChannel, regionFromTopicArn } from './sns.js';
import type { Channel } from './types.js';

/** What the channels need from outside the configuration (tests inject these). */
export interface ChannelDeps {
  /** SNS client; by default one for the topic's region, with SDK retries off (the pipeline retries). */
  sns?: SNSClient;
  /** Console output (default: stdout). */
  write?: (s: string) => void;
  /** Clock for Feishu signatures. */
  now?: () => Date;
}

/**
 * Builds the configured channels, in this order: `slack`, `feishu`, `sns`; when none is
 * configured, `[console]`. The default SNS client's region is the topic ARN's (SNS topics are
 * regional), passed explicitly; credentials and `AWS_ENDPOINT_URL_SNS` are the SDK's own settings.
 * @throws Error when `config.sns.topicArn` has no region field
 */
export function buildChannels(config: Config, deps: ChannelDeps = {}): Channel[] {
  const channels: Channel[] = [];
  if (config.slack) channels.push(createSlackChannel({ webhookUrl: config.slack.webhookUrl }));
  if (config.feishu) {
    channels.push(createFeishuChannel({ webhookUrl: config.feishu.webhookUrl, secret: config.feishu.secret, now: deps.now }));
  }
  if (config.sns) {
    const { topicArn } = config.sns;
    const client = deps.sns ?? new SNSClient({ region: regionFromTopicArn(topicArn), maxAttempts: 1 });
    channels.push(createSnsChannel({ client, topicArn }));
  }
  return channels.length ? channels : [createConsoleChannel(deps.write)];
}
