/**
 * DingTalk's settings: a routing-file entry `{ type: dingtalk, webhookUrl: { secret: NAME }, signingSecret?: { secret: NAME },
 * keyword?: 告警, mention?: [mobile:…, dingtalk:…, '@all'] }` (a group's custom robot, its signing secret when
 * its security setting is 加签, its keyword when it is 自定义关键词, who its messages @-mention), and the
 * environment's `DINGTALK_WEBHOOK_URL` + `DINGTALK_SECRET` + `DINGTALK_KEYWORD` (the channel named `dingtalk`), and
 * `ESCALATION_DINGTALK_WEBHOOK_URL` + `ESCALATION_DINGTALK_SECRET` + `ESCALATION_DINGTALK_KEYWORD`, another robot's,
 * the escalation target `escalation-dingtalk`.
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
import { createDingTalkChannel } from './index.js';

/** Longest keyword, characters (DingTalk's console takes short words; a sentence would never match). */
const MAX_KEYWORD_CHARS = 20;
const keywordSetting = () =>
  z
    .string()
    .check(
      z.minLength(1),
      z.maxLength(MAX_KEYWORD_CHARS, { message: `must be at most ${MAX_KEYWORD_CHARS} characters` }),
    );

const schema = z.strictObject({
  type: z.literal('dingtalk'),
  webhookUrl: secretRef,
  signingSecret: z.optional(secretRef),
  /** The robot's keyword when its security setting is "custom keywords": every message carries it. */
  keyword: z.optional(keywordSetting()),
  mention: mentionField('dingtalk'),
  ...renderFields,
});
export type DingTalkSpec = z.infer<typeof schema>;
export type DingTalkInstance = RobotInstance<'dingtalk'>;

const entry = robotEntry('dingtalk');

export const dingtalk = {
  schema,
  mentions: 'dingtalk',
  secretNames: entry.secretNames,
  resolve: entry.resolve,
  create: (c, deps) =>
    createDingTalkChannel({
      name: c.name,
      locale: c.locale,
      digestAbove: c.digestAbove,
      webhookUrl: c.webhookUrl,
      secret: c.signingSecret,
      keyword: c.keyword,
      mention: c.mention,
      now: deps.now,
    }),
  env: envSettings({
    variables: {
      DINGTALK_WEBHOOK_URL: webhookUrlSetting(),
      DINGTALK_SECRET: optional(z.string()),
      // The robot's keyword (keyword security): not a secret, it is in every message.
      DINGTALK_KEYWORD: optional(keywordSetting()),
      ESCALATION_DINGTALK_WEBHOOK_URL: webhookUrlSetting(),
      ESCALATION_DINGTALK_SECRET: optional(z.string()),
      ESCALATION_DINGTALK_KEYWORD: optional(keywordSetting()),
    },
    secrets: [
      'DINGTALK_WEBHOOK_URL',
      'DINGTALK_SECRET',
      'ESCALATION_DINGTALK_WEBHOOK_URL',
      'ESCALATION_DINGTALK_SECRET',
    ],
    problems: (v) => [
      ...requires(v, 'DINGTALK_SECRET', 'DINGTALK_WEBHOOK_URL'),
      ...requires(
        v,
        'DINGTALK_KEYWORD',
        'DINGTALK_WEBHOOK_URL',
        "a routing file's dingtalk instance takes its own keyword",
      ),
      ...requires(v, 'ESCALATION_DINGTALK_SECRET', 'ESCALATION_DINGTALK_WEBHOOK_URL'),
      ...requires(v, 'ESCALATION_DINGTALK_KEYWORD', 'ESCALATION_DINGTALK_WEBHOOK_URL'),
    ],
    read: (v) => ({
      channels: [
        ifSet(v.DINGTALK_WEBHOOK_URL, (url) => entry.fromEnv('dingtalk', url, v.DINGTALK_SECRET, v.DINGTALK_KEYWORD)),
      ],
      escalation: {
        ESCALATION_DINGTALK_WEBHOOK_URL: ifSet(v.ESCALATION_DINGTALK_WEBHOOK_URL, (url) =>
          entry.fromEnv('escalation-dingtalk', url, v.ESCALATION_DINGTALK_SECRET, v.ESCALATION_DINGTALK_KEYWORD),
        ),
      },
    }),
  }),
} satisfies ChannelType<DingTalkSpec, DingTalkInstance> & { mentions: 'dingtalk' };
