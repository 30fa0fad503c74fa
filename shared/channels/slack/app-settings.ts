/**
 * The Slack app's settings: a routing-file entry `{ type: slack-app, channel: C0123456789,
 * botToken: { secret: NAME }, mention?: [U…, S…, '@here'] }` (token default: the `SLACK_BOT_TOKEN` setting); the
 * environment's `SLACK_BOT_TOKEN` + `SLACK_CHANNEL` (the channel named `slack`), `SLACK_SIGNING_SECRET` (the
 * Acknowledge button's `POST /v1/slack/interactions`) and `SLACK_API_URL` (the Web API base, tests); and how
 * an instance becomes a channel.
 */
import * as z from '../../core/zod.js';
import { Secret } from '../../core/secret.js';
import { atLeast, matching, optional, requires, secretOf } from '../../core/settings.js';
import { trimTrailing } from '../../core/trim.js';
import type { Channel } from '../channel.js';
import { envSettings, type EnvValues } from '../env.js';
import { mentionField } from '../mentions.js';
import {
  renderFields,
  secretRef,
  webhookUrlSetting,
  type ChannelType,
  type CreateDeps,
  type InstanceBase,
} from '../settings.js';
import { createSlackAppChannel } from './app-channel.js';
import { createSlackApi, type SlackSettingNames } from './web-api.js';

/** A Slack channel id (`C0123456789`) or name, as `SLACK_CHANNEL` and the routing file's `channel` take it. */
export const SLACK_CHANNEL_PATTERN = /^#?[A-Za-z0-9_.-]{1,80}$/;

const schema = z.strictObject({
  type: z.literal('slack-app'),
  /** Where the app posts; not a secret. */
  channel: z
    .string()
    .check(z.regex(SLACK_CHANNEL_PATTERN, { message: 'must be a Slack channel id (C0123456789) or name' })),
  /** Unset: the `SLACK_BOT_TOKEN` setting. */
  botToken: z.optional(secretRef),
  mention: mentionField('slack'),
  ...renderFields,
});
export type SlackAppSpec = z.infer<typeof schema>;
/** `settings` names the settings an error tells the operator to fix. */
export type SlackAppInstance = InstanceBase & {
  type: 'slack-app';
  channel: string;
  token: Secret;
  settings: SlackSettingNames;
  mention?: string[];
};

/** What the Slack app's settings say beyond its channel: `Config.channelOptions['slack-app']`. */
export interface SlackAppOptions {
  /** `SLACK_API_URL`, ending in `/`; unset: Slack's. */
  apiUrl?: string;
  /** `SLACK_SIGNING_SECRET`: turns on `POST /v1/slack/interactions`. */
  signingSecret?: Secret;
}

const variables = {
  SLACK_BOT_TOKEN: optional(
    matching(
      /^xox[a-z]-[A-Za-z0-9-]{8,}$/,
      "must be a Slack bot token (xoxb-…, from the app's OAuth & Permissions page)",
    ),
  ),
  SLACK_CHANNEL: optional(matching(SLACK_CHANNEL_PATTERN, 'must be a Slack channel id (C0123456789) or name')),
  SLACK_SIGNING_SECRET: optional(
    atLeast(16, "must be the app's signing secret (Basic Information page), at least 16 characters"),
  ),
  SLACK_API_URL: webhookUrlSetting(),
};

/** The channel named `slack` of `SLACK_BOT_TOKEN` and `SLACK_CHANNEL`. */
const envInstance = (token: string, channel: string): SlackAppInstance => ({
  name: 'slack',
  type: 'slack-app',
  channel,
  token: new Secret(token),
  settings: { token: 'SLACK_BOT_TOKEN', channel: 'SLACK_CHANNEL' },
});

/** Settings of the Slack app that only make sense together. */
function problems(v: EnvValues<typeof variables>, settings: Record<string, string | undefined>): string[] {
  const found = requires(v, 'SLACK_CHANNEL', 'SLACK_BOT_TOKEN', 'the Slack app posts with its bot token');
  if (v.SLACK_CHANNEL && settings.SLACK_WEBHOOK_URL)
    found.push(
      'SLACK_CHANNEL: set together with SLACK_WEBHOOK_URL; both would be the channel named slack (choose one, or add a slack-app instance in the routing file)',
    );
  if (v.SLACK_SIGNING_SECRET && !(settings.PUBLIC_URL && settings.ACK_SECRET))
    found.push(
      'SLACK_SIGNING_SECRET: set, but PUBLIC_URL and ACK_SECRET are not (the Acknowledge button carries a signed acknowledgement token)',
    );
  return found;
}

export const slackApp = {
  schema,
  mentions: 'slack',
  secretNames: (spec) => (spec.botToken ? [spec.botToken.secret] : []),
  resolve(name, spec, ctx) {
    const ref = spec.botToken ?? { secret: 'SLACK_BOT_TOKEN' };
    const token = ctx.secret(ref, 'botToken', false);
    const settings = { token: ref.secret, channel: `ROUTING_FILE channels.${name}.channel` };
    return (
      token && {
        name,
        type: 'slack-app',
        channel: spec.channel,
        token,
        settings,
        ...(spec.mention && { mention: spec.mention }),
        locale: spec.locale,
        digestAbove: spec.digestAbove,
      }
    );
  },
  create: createSlackAppInstance,
  env: envSettings({
    variables,
    secrets: ['SLACK_BOT_TOKEN', 'SLACK_SIGNING_SECRET'],
    problems,
    read: (v) => ({
      channels: [v.SLACK_BOT_TOKEN && v.SLACK_CHANNEL ? envInstance(v.SLACK_BOT_TOKEN, v.SLACK_CHANNEL) : undefined],
      options: {
        apiUrl: v.SLACK_API_URL && `${trimTrailing(v.SLACK_API_URL, '/')}/`,
        signingSecret: secretOf(v.SLACK_SIGNING_SECRET),
      } satisfies SlackAppOptions,
    }),
  }),
} satisfies ChannelType<SlackAppSpec, SlackAppInstance> & { mentions: 'slack' };

/**
 * @throws Error when `deps.slackApp` is unset (the composition root must give Slack-app channels their thread store)
 */
export function createSlackAppInstance(c: SlackAppInstance, deps: CreateDeps): Channel {
  const app = deps.slackApp;
  if (!app) throw new Error(`${c.name}: a Slack-app channel needs its thread store (CreateDeps.slackApp)`);
  const api = createSlackApi({
    name: c.name,
    token: c.token,
    apiUrl: app.apiUrl,
    timeoutMs: app.timeoutMs,
    settings: c.settings,
  });
  const now = deps.now ?? (() => new Date());
  return createSlackAppChannel({
    name: c.name,
    locale: c.locale,
    digestAbove: c.digestAbove,
    channel: c.channel,
    mention: c.mention,
    api,
    threads: app.threads,
    warn: app.warn,
    now: () => now().getTime(),
  });
}
