/**
 * WeCom's settings: a routing-file entry `{ type: wecom, webhookUrl: { secret: NAME }, mention?: [wecom:<userid>, …] }`
 * (a group robot, who its messages @-mention), and the environment's `WECOM_WEBHOOK_URL` (the channel named `wecom`)
 * and `ESCALATION_WECOM_WEBHOOK_URL` (another robot's, the escalation target `escalation-wecom`).
 */
import * as z from '../../core/zod.js';
import { Secret } from '../../core/secret.js';
import { envSettings, ifSet } from '../env.js';
import { mentionField } from '../mentions.js';
import { renderFields, secretRef, webhookUrlSetting, type ChannelType, type InstanceBase } from '../settings.js';
import { createWeComChannel } from './index.js';

const schema = z.strictObject({
  type: z.literal('wecom'),
  webhookUrl: secretRef,
  mention: mentionField('wecom'),
  ...renderFields,
});
export type WeComSpec = z.infer<typeof schema>;
export type WeComInstance = InstanceBase & { type: 'wecom'; webhookUrl: Secret; mention?: string[] };

/** A robot configured by environment variables. */
const robot = (name: string, url: string): WeComInstance => ({ name, type: 'wecom', webhookUrl: new Secret(url) });

export const wecom = {
  schema,
  mentions: 'wecom',
  secretNames: (spec) => [spec.webhookUrl.secret],
  resolve(name, spec, ctx) {
    const webhookUrl = ctx.secret(spec.webhookUrl, 'webhookUrl', true);
    return (
      webhookUrl && {
        name,
        type: 'wecom',
        webhookUrl,
        ...(spec.mention && { mention: spec.mention }),
        locale: spec.locale,
        digestAbove: spec.digestAbove,
      }
    );
  },
  create: (c, deps) =>
    createWeComChannel({
      name: c.name,
      locale: c.locale,
      digestAbove: c.digestAbove,
      webhookUrl: c.webhookUrl,
      mention: c.mention,
      now: deps.now,
    }),
  env: envSettings({
    variables: { WECOM_WEBHOOK_URL: webhookUrlSetting(), ESCALATION_WECOM_WEBHOOK_URL: webhookUrlSetting() },
    secrets: ['WECOM_WEBHOOK_URL', 'ESCALATION_WECOM_WEBHOOK_URL'],
    read: (v) => ({
      channels: [ifSet(v.WECOM_WEBHOOK_URL, (url) => robot('wecom', url))],
      escalation: {
        ESCALATION_WECOM_WEBHOOK_URL: ifSet(v.ESCALATION_WECOM_WEBHOOK_URL, (url) => robot('escalation-wecom', url)),
      },
    }),
  }),
} satisfies ChannelType<WeComSpec, WeComInstance> & { mentions: 'wecom' };
