/**
 * The Slack app's settings: a routing-file entry `{ type: slack-app, channel: C0123456789,
 * botToken: { secret: NAME } }` (token default: the `SLACK_BOT_TOKEN` setting), and how an instance —
 * from the file, or from `SLACK_BOT_TOKEN` + `SLACK_CHANNEL` — becomes a channel.
 */
import * as z from '../../core/zod.js';
import type { Secret } from '../../core/secret.js';
import type { Channel } from '../channel.js';
import { renderFields, secretRef, type ChannelType, type CreateDeps, type InstanceBase } from '../settings.js';
import { createSlackAppChannel } from './app-channel.js';
import { createSlackApi, type SlackSettingNames } from './web-api.js';

/** A Slack channel id (`C0123456789`) or name, as `SLACK_CHANNEL` and the routing file's `channel` take it. */
export const SLACK_CHANNEL_PATTERN = /^#?[A-Za-z0-9_.-]{1,80}$/;

const schema = z.strictObject({
  type: z.literal('slack-app'),
  /** Where the app posts; not a secret. */
  channel: z.string().check(z.regex(SLACK_CHANNEL_PATTERN, { message: 'must be a Slack channel id (C0123456789) or name' })),
  /** Unset: the `SLACK_BOT_TOKEN` setting. */
  botToken: z.optional(secretRef),
  ...renderFields,
});
export type SlackAppSpec = z.infer<typeof schema>;
/** `settings` names the settings an error tells the operator to fix. */
export type SlackAppInstance = InstanceBase & { type: 'slack-app'; channel: string; token: Secret; settings: SlackSettingNames };

export const slackApp = {
  schema,
  secretNames: (spec) => (spec.botToken ? [spec.botToken.secret] : []),
  resolve(name, spec, ctx) {
    const ref = spec.botToken ?? { secret: 'SLACK_BOT_TOKEN' };
    const token = ctx.secret(ref, 'botToken', false);
    const settings = { token: ref.secret, channel: `ROUTING_FILE channels.${name}.channel` };
    return token && { name, type: 'slack-app', channel: spec.channel, token, settings, locale: spec.locale, digestAbove: spec.digestAbove };
  },
  create: createSlackAppInstance,
} satisfies ChannelType<SlackAppSpec, SlackAppInstance>;

/**
 * @throws Error when `deps.slackApp` is unset (the composition root must give Slack-app channels their thread store)
 */
export function createSlackAppInstance(c: SlackAppInstance, deps: CreateDeps): Channel {
  const app = deps.slackApp;
  if (!app) throw new Error(`${c.name}: a Slack-app channel needs its thread store (CreateDeps.slackApp)`);
  const api = createSlackApi({ name: c.name, token: c.token, apiUrl: app.apiUrl, timeoutMs: app.timeoutMs, settings: c.settings });
  const now = deps.now ?? (() => new Date());
  return createSlackAppChannel({ name: c.name, locale: c.locale, digestAbove: c.digestAbove, channel: c.channel, api, threads: app.threads, warn: app.warn, now: () => now().getTime() });
}
