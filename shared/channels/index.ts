/**
 * The one explicit list of channels: which are active follows from the configuration alone.
 */
import { SNSClient } from '@aws-sdk/client-sns';
import type { Config } from '../config.js';
import type { ChannelInstance } from '../routing/load.js';
import { createConsoleChannel } from './console.js';
import { createFeishuChannel } from './feishu.js';
import { createPagerDutyChannel } from './pagerduty/channel.js';
import { createSlackChannel } from './slack.js';
import { createSnsChannel, regionFromTopicArn } from './sns.js';
import type { Channel } from './types.js';

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
 * `feishu`, `sns`, `pagerduty`; then the routing file's instances, in file order. When none is configured,
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
  if (config.pagerduty) channels.push(createPagerDutyChannel({ routingKey: config.pagerduty.routingKey, eventsUrl: config.pagerdutyEventsUrl }));
  for (const instance of config.routing?.channels ?? []) channels.push(fromInstance(instance, snsClient, deps, config.pagerdutyEventsUrl));
  return channels.length ? channels : [createConsoleChannel(deps.write)];
}

function fromInstance(c: ChannelInstance, snsClient: (topicArn: string) => SNSClient, deps: ChannelDeps, pagerdutyEventsUrl?: string): Channel {
  const render = { name: c.name, locale: c.locale, digestAbove: c.digestAbove };
  switch (c.type) {
    case 'slack':
      return createSlackChannel({ ...render, webhookUrl: c.webhookUrl });
    case 'feishu':
      return createFeishuChannel({ ...render, webhookUrl: c.webhookUrl, secret: c.signingSecret, now: deps.now });
    case 'sns':
      return createSnsChannel({ ...render, client: snsClient(c.topicArn), topicArn: c.topicArn, messageStructure: c.messageStructure });
    case 'console':
      return createConsoleChannel(deps.write, render);
    case 'pagerduty':
      return createPagerDutyChannel({ name: c.name, digestAbove: c.digestAbove, routingKey: c.routingKey, eventsUrl: pagerdutyEventsUrl });
  }
}
