/**
 * The active channels, from the configuration alone: the environment's channels, then the routing
 * file's, and the escalation targets, each built by its type in `shared/channels/registry.ts`.
 */
import { SNSClient } from '@aws-sdk/client-sns';
import type { Channel } from '../channels/channel.js';
import { createConsoleChannel } from '../channels/console.js';
import { type ChannelInstance, createChannel } from '../channels/registry.js';
import type { CreateDeps } from '../channels/settings.js';
import { regionFromTopicArn } from '../channels/sns/index.js';
import type { Config } from './config.js';
import type { SlackThreadStore } from '../store/slack-threads.js';
import type { FeishuContacts } from '../channels/feishu/contacts.js';
import type { FeishuCardStore } from '../store/feishu-cards.js';
import type { PagerDutyStormStore } from '../store/pagerduty-storms.js';

/** The SNS client for a topic ARN. */
export type SnsClients = (topicArn: string) => SNSClient;

/** What the channels need from outside the configuration (tests inject these). */
export interface ChannelDeps {
  /**
   * SNS: one client for every topic (tests), or a client per topic; by default {@link snsClientsByRegion}.
   * Pass the same {@link SnsClients} to every build of one process so that each region has one client.
   */
  sns?: SNSClient | SnsClients;
  /** Console output (default: stdout). */
  write?: (s: string) => void;
  /** Clock for Feishu signatures. */
  now?: () => Date;
  /** Where Slack-app channels keep their threads (required when one is configured). */
  slackThreads?: SlackThreadStore;
  /** Problems that do not fail a delivery (a Slack thread that could not be stored). */
  warn?: (message: string, fields: Record<string, unknown>) => void;
  /** The Feishu app's client and where its channels keep their cards (required when `FEISHU_APP_ID` is set). */
  feishuApp?: { contacts: FeishuContacts; cards: FeishuCardStore };
  /** Where PagerDuty channels remember their storms' alerts; unset: not remembered. */
  pagerDutyStorms?: PagerDutyStormStore;
}

/**
 * One SNS client per topic region, made on first use: SNS topics are regional, so the region is the
 * topic ARN's, passed explicitly; SDK retries are off (the pipeline retries). Credentials and
 * `AWS_ENDPOINT_URL_SNS` are the SDK's own settings.
 * @throws Error (from the returned function) when a topic ARN has no region field
 */
export function snsClientsByRegion(): SnsClients {
  const clients = new Map<string, SNSClient>();
  return (topicArn) => {
    const region = regionFromTopicArn(topicArn);
    if (!clients.has(region)) clients.set(region, new SNSClient({ region, maxAttempts: 1 }));
    return clients.get(region)!;
  };
}

/**
 * Builds the configured channels: first the environment's (`config.envChannels`, in registry order:
 * `slack` — the webhook or the Slack app of `SLACK_CHANNEL` —, `feishu` — the custom bot or the app of
 * `FEISHU_CHAT_ID` —, `sns`, `pagerduty`), then the routing file's instances, in file order. When none is
 * configured, `[console]`.
 * @throws Error when an SNS topic ARN has no region field
 */
export function buildChannels(config: Config, deps: ChannelDeps = {}): Channel[] {
  const instances = [...config.envChannels, ...(config.routing?.channels ?? [])];
  if (!instances.length) return [createConsoleChannel(deps.write)];
  return build(instances, config, deps);
}

/** The escalation targets (`escalation-slack`, `escalation-sns`: second instances in the ledger); none when escalation is off. */
export function buildEscalationTargets(config: Config, deps: ChannelDeps = {}): Channel[] {
  return build(config.escalation?.targets ?? [], config, deps);
}

function build(instances: ChannelInstance[], config: Config, deps: ChannelDeps): Channel[] {
  const sns = deps.sns ?? snsClientsByRegion();
  const warn = deps.warn ?? (() => undefined);
  const feishuApp = config.channelOptions['feishu-app'];
  const create: CreateDeps = {
    snsClient: typeof sns === 'function' ? sns : () => sns,
    write: deps.write,
    now: deps.now,
    ...(deps.pagerDutyStorms && { pagerDutyStorms: deps.pagerDutyStorms }),
    slackApp: deps.slackThreads && {
      threads: deps.slackThreads,
      apiUrl: config.channelOptions['slack-app']?.apiUrl,
      timeoutMs: config.delivery.timeoutMs,
      warn,
    },
    feishuApp: deps.feishuApp &&
      feishuApp && {
        ...deps.feishuApp,
        interactive: Boolean(feishuApp.encryptKey),
        silence: Boolean(config.alertmanagerUrl),
        warn,
      },
  };
  return instances.map((instance) => createChannel(instance, create));
}
