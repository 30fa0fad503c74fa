/**
 * Feishu's settings: a routing-file entry `{ type: feishu, webhookUrl: { secret: NAME }, signingSecret?: { secret: NAME },
 * mention?: [ou_…, user_id:…, '@all'], keyword?: 告警 }` (a custom bot's webhook, its signature secret when the bot has
 * signature verification on, who its cards @-mention: ids only, a custom bot cannot look up emails; and its keyword
 * when its security setting is custom keywords), and the environment's `FEISHU_WEBHOOK_URL` + `FEISHU_SECRET` +
 * `FEISHU_KEYWORD` (the channel named `feishu`); `ESCALATION_FEISHU_WEBHOOK_URL` + `ESCALATION_FEISHU_SECRET` +
 * `ESCALATION_FEISHU_KEYWORD`, another bot's, the escalation target `escalation-feishu`.
 */
import * as z from '../../core/zod.js';
import { optional, requires } from '../../core/settings.js';
import { envSettings, ifSet } from '../env.js';
import { mentionField } from '../mentions.js';
import {
  renderFields,
  secretRef,
  webhookUrlSetting,
  robotEntry,
  type ChannelType,
  type RobotInstance,
} from '../settings.js';
import { createFeishuChannel } from './index.js';
import { MAX_KEYWORD_CHARS } from './keyword.js';

/** A bot's keyword: Feishu takes keywords of 1–20 characters. */
const keywordSetting = () =>
  z
    .string()
    .check(
      z.minLength(1),
      z.maxLength(MAX_KEYWORD_CHARS, { message: `must be at most ${MAX_KEYWORD_CHARS} characters` }),
    );

const schema = z.strictObject({
  type: z.literal('feishu'),
  webhookUrl: secretRef,
  signingSecret: z.optional(secretRef),
  mention: mentionField('feishu-bot'),
  /** The bot's keyword when its security setting is "custom keywords": every card carries it. */
  keyword: z.optional(keywordSetting()),
  ...renderFields,
});
export type FeishuSpec = z.infer<typeof schema>;
export type FeishuInstance = RobotInstance<'feishu'>;

const entry = robotEntry('feishu');

export const feishu = {
  schema,
  mentions: 'feishu-bot',
  secretNames: entry.secretNames,
  resolve: entry.resolve,
  create: (c, deps) =>
    createFeishuChannel({
      name: c.name,
      locale: c.locale,
      digestAbove: c.digestAbove,
      webhookUrl: c.webhookUrl,
      secret: c.signingSecret,
      mention: c.mention,
      keyword: c.keyword,
      now: deps.now,
    }),
  env: envSettings({
    variables: {
      FEISHU_WEBHOOK_URL: webhookUrlSetting(),
      FEISHU_SECRET: optional(z.string()),
      // The bot's keyword (keyword security): not a secret, it is in every card.
      FEISHU_KEYWORD: optional(keywordSetting()),
      ESCALATION_FEISHU_WEBHOOK_URL: webhookUrlSetting(),
      ESCALATION_FEISHU_SECRET: optional(z.string()),
      ESCALATION_FEISHU_KEYWORD: optional(keywordSetting()),
    },
    secrets: ['FEISHU_WEBHOOK_URL', 'FEISHU_SECRET', 'ESCALATION_FEISHU_WEBHOOK_URL', 'ESCALATION_FEISHU_SECRET'],
    problems: (v) => [
      ...requires(v, 'FEISHU_SECRET', 'FEISHU_WEBHOOK_URL'),
      ...requires(v, 'FEISHU_KEYWORD', 'FEISHU_WEBHOOK_URL', "a routing file's feishu instance takes its own keyword"),
      ...requires(v, 'ESCALATION_FEISHU_SECRET', 'ESCALATION_FEISHU_WEBHOOK_URL'),
      ...requires(v, 'ESCALATION_FEISHU_KEYWORD', 'ESCALATION_FEISHU_WEBHOOK_URL'),
    ],
    read: (v) => ({
      channels: [ifSet(v.FEISHU_WEBHOOK_URL, (url) => entry.fromEnv('feishu', url, v.FEISHU_SECRET, v.FEISHU_KEYWORD))],
      escalation: {
        ESCALATION_FEISHU_WEBHOOK_URL: ifSet(v.ESCALATION_FEISHU_WEBHOOK_URL, (url) =>
          entry.fromEnv('escalation-feishu', url, v.ESCALATION_FEISHU_SECRET, v.ESCALATION_FEISHU_KEYWORD),
        ),
      },
    }),
  }),
} satisfies ChannelType<FeishuSpec, FeishuInstance> & { mentions: 'feishu-bot' };
