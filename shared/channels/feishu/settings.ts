/**
 * Feishu's settings: a routing-file entry `{ type: feishu, webhookUrl: { secret: NAME }, signingSecret?: { secret: NAME } }`
 * (a custom bot's webhook, and its signature secret when the bot has signature verification on).
 */
import * as z from '../../core/zod.js';
import type { Secret } from '../../core/secret.js';
import { renderFields, secretRef, type ChannelType, type InstanceBase } from '../settings.js';
import { createFeishuChannel } from './index.js';

const schema = z.strictObject({ type: z.literal('feishu'), webhookUrl: secretRef, signingSecret: z.optional(secretRef), ...renderFields });
export type FeishuSpec = z.infer<typeof schema>;
export type FeishuInstance = InstanceBase & { type: 'feishu'; webhookUrl: Secret; signingSecret?: Secret };

export const feishu = {
  schema,
  secretNames: (spec) => [spec.webhookUrl.secret, ...(spec.signingSecret ? [spec.signingSecret.secret] : [])],
  resolve(name, spec, ctx) {
    const webhookUrl = ctx.secret(spec.webhookUrl, 'webhookUrl', true);
    const signingSecret = spec.signingSecret && ctx.secret(spec.signingSecret, 'signingSecret', false);
    return webhookUrl && { name, type: 'feishu', webhookUrl, signingSecret, locale: spec.locale, digestAbove: spec.digestAbove };
  },
  create: (c, deps) =>
    createFeishuChannel({ name: c.name, locale: c.locale, digestAbove: c.digestAbove, webhookUrl: c.webhookUrl, secret: c.signingSecret, now: deps.now }),
} satisfies ChannelType<FeishuSpec, FeishuInstance>;
