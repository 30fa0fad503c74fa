/** Slack's settings: a routing-file entry `{ type: slack, webhookUrl: { secret: NAME } }` (an incoming webhook). */
import * as z from '../../core/zod.js';
import type { Secret } from '../../core/secret.js';
import { renderFields, secretRef, type ChannelType, type InstanceBase } from '../settings.js';
import { createSlackChannel } from './index.js';

const schema = z.strictObject({ type: z.literal('slack'), webhookUrl: secretRef, ...renderFields });
export type SlackSpec = z.infer<typeof schema>;
export type SlackInstance = InstanceBase & { type: 'slack'; webhookUrl: Secret };

export const slack = {
  schema,
  secretNames: (spec) => [spec.webhookUrl.secret],
  resolve(name, spec, ctx) {
    const webhookUrl = ctx.secret(spec.webhookUrl, 'webhookUrl', true);
    return webhookUrl && { name, type: 'slack', webhookUrl, locale: spec.locale, digestAbove: spec.digestAbove };
  },
  create: (c) => createSlackChannel({ name: c.name, locale: c.locale, digestAbove: c.digestAbove, webhookUrl: c.webhookUrl }),
} satisfies ChannelType<SlackSpec, SlackInstance>;
