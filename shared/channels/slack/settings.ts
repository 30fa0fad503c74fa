/**
 * Slack's incoming webhook: a routing-file entry `{ type: slack, webhookUrl: { secret: NAME }, mention?: [U…, S…,
 * '@here'] }` (and who its messages @-mention), and the environment's `SLACK_WEBHOOK_URL` (the channel named
 * `slack`) and `ESCALATION_SLACK_WEBHOOK_URL` (the escalation target `escalation-slack`).
 */
import * as z from '../../core/zod.js';
import { Secret } from '../../core/secret.js';
import { envSettings, ifSet } from '../env.js';
import { mentionField } from '../mentions.js';
import { renderFields, secretRef, webhookUrlSetting, type ChannelType, type InstanceBase } from '../settings.js';
import { createSlackChannel } from './index.js';

const schema = z.strictObject({
  type: z.literal('slack'),
  webhookUrl: secretRef,
  mention: mentionField('slack'),
  ...renderFields,
});
export type SlackSpec = z.infer<typeof schema>;
export type SlackInstance = InstanceBase & { type: 'slack'; webhookUrl: Secret; mention?: string[] };

const instance = (name: string, webhookUrl: string): SlackInstance => ({
  name,
  type: 'slack',
  webhookUrl: new Secret(webhookUrl),
});

export const slack = {
  schema,
  mentions: 'slack',
  secretNames: (spec) => [spec.webhookUrl.secret],
  resolve(name, spec, ctx) {
    const webhookUrl = ctx.secret(spec.webhookUrl, 'webhookUrl', true);
    return (
      webhookUrl && {
        name,
        type: 'slack',
        webhookUrl,
        ...(spec.mention && { mention: spec.mention }),
        locale: spec.locale,
        digestAbove: spec.digestAbove,
      }
    );
  },
  create: (c) =>
    createSlackChannel({
      name: c.name,
      locale: c.locale,
      digestAbove: c.digestAbove,
      webhookUrl: c.webhookUrl,
      mention: c.mention,
    }),
  env: envSettings({
    variables: { SLACK_WEBHOOK_URL: webhookUrlSetting(), ESCALATION_SLACK_WEBHOOK_URL: webhookUrlSetting() },
    secrets: ['SLACK_WEBHOOK_URL', 'ESCALATION_SLACK_WEBHOOK_URL'],
    read: (v) => ({
      channels: [ifSet(v.SLACK_WEBHOOK_URL, (url) => instance('slack', url))],
      escalation: {
        ESCALATION_SLACK_WEBHOOK_URL: ifSet(v.ESCALATION_SLACK_WEBHOOK_URL, (url) => instance('escalation-slack', url)),
      },
    }),
  }),
} satisfies ChannelType<SlackSpec, SlackInstance> & { mentions: 'slack' };
