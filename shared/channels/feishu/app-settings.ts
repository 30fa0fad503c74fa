/**
 * The Feishu app's settings, checked once at start (errors name the setting, never echo the value):
 * - `FEISHU_APP_ID`, `FEISHU_APP_SECRET`: the custom app (secret: in the settings secret in AWS);
 * - `FEISHU_CHAT_ID`: the group the `feishu` channel sends cards to (`oc_…`);
 * - `FEISHU_API_URL`: the Open API's base, `https://open.feishu.cn/open-apis/` (Lark: `https://open.larksuite.com/open-apis/`);
 * - `FEISHU_ENCRYPT_KEY`, `FEISHU_VERIFICATION_TOKEN`: the callback's "Encrypt Key" and "Verification
 *   Token"; `POST /v1/feishu/callback` refuses every callback without the key, and without it the cards'
 *   Acknowledge is a link to the page instead of a button.
 * The routing file's `{ type: feishu-app, chatId: oc_…, mention: [...], urgent: app|sms|phone }` instances
 * send with the same app. The app's configuration is `Config.channelOptions['feishu-app']`.
 */
import * as z from '../../core/zod.js';
import { Secret } from '../../core/secret.js';
import { atLeast, matching, optional } from '../../core/settings.js';
import type { Channel } from '../channel.js';
import { envSettings, type EnvValues } from '../env.js';
import { mentionField } from '../mentions.js';
import { renderFields, webhookUrlProblem, type ChannelType, type CreateDeps, type InstanceBase } from '../settings.js';
import type { FeishuAppSettingNames } from './api-errors.js';
import { createFeishuAppChannel } from './app-channel.js';
import { FeishuContacts } from './contacts.js';
import { FEISHU_API_URL, FeishuOpenApi, type UrgentKind } from './open-api.js';

const CHAT_ID = /^oc_[0-9A-Za-z]{8,64}$/;
const CHAT_ID_MESSAGE = "must be a Feishu chat_id (oc_…, from the group's settings or the chat API)";

/** `FEISHU_API_URL`: https (http only to loopback), the Open API's base path; normalised to end in `/`. */
const apiUrl = z.pipe(
  z.string().check(
    z.superRefine((s, ctx) => {
      const problem = webhookUrlProblem(s);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
      else if (!/\/open-apis\/?$/.test(new URL(s).pathname))
        ctx.addIssue({
          code: 'custom',
          message:
            'must be the Open API base ending in /open-apis/: https://open.feishu.cn/open-apis/ (Feishu) or https://open.larksuite.com/open-apis/ (Lark)',
        });
    }),
  ),
  z.transform((s) => (s.endsWith('/') ? s : `${s}/`)),
);

/** The environment settings of the Feishu app. */
const variables = {
  FEISHU_APP_ID: optional(matching(/^cli_[0-9A-Za-z]{4,64}$/, "must be the app's App ID (cli_…)")),
  FEISHU_APP_SECRET: optional(atLeast(16, "must be the app's App Secret (Credentials & Basic Info page)")),
  FEISHU_CHAT_ID: optional(matching(CHAT_ID, CHAT_ID_MESSAGE)),
  FEISHU_API_URL: optional(apiUrl),
  FEISHU_ENCRYPT_KEY: optional(
    atLeast(16, 'must be the Encrypt Key of Events & Callbacks > Encryption Strategy, at least 16 characters'),
  ),
  FEISHU_VERIFICATION_TOKEN: optional(atLeast(8, 'must be the Verification Token of Events & Callbacks')),
};

type Env = EnvValues<typeof variables>;

/** The validated app settings. */
export interface FeishuAppConfig {
  appId: string;
  appSecret: Secret;
  /** `FEISHU_CHAT_ID`: the `feishu` channel's chat; unset: only the routing file's instances send. */
  chatId?: string;
  /** Ends in `/`. */
  apiUrl: string;
  /** `FEISHU_ENCRYPT_KEY`: turns the callback on. */
  encryptKey?: Secret;
  verificationToken?: Secret;
}

/**
 * Settings of the app that only make sense together.
 * @param settings every setting (for `FEISHU_WEBHOOK_URL`, `PUBLIC_URL`, `ACK_SECRET`)
 */
function feishuAppProblems(e: Env, settings: Record<string, string | undefined>): string[] {
  const problems: string[] = [];
  const app = e.FEISHU_APP_ID && e.FEISHU_APP_SECRET;
  if (e.FEISHU_APP_ID && !e.FEISHU_APP_SECRET) problems.push('FEISHU_APP_SECRET: required with FEISHU_APP_ID');
  if (e.FEISHU_APP_SECRET && !e.FEISHU_APP_ID) problems.push('FEISHU_APP_ID: required with FEISHU_APP_SECRET');
  for (const name of ['FEISHU_CHAT_ID', 'FEISHU_API_URL', 'FEISHU_ENCRYPT_KEY', 'FEISHU_VERIFICATION_TOKEN'] as const)
    if (e[name] && !app) problems.push(`${name}: set, but FEISHU_APP_ID and FEISHU_APP_SECRET are not`);
  if (e.FEISHU_CHAT_ID && settings.FEISHU_WEBHOOK_URL)
    problems.push(
      'FEISHU_CHAT_ID: set together with FEISHU_WEBHOOK_URL; both would be the channel named feishu (choose one, or add a feishu-app instance in the routing file)',
    );
  if (e.FEISHU_VERIFICATION_TOKEN && !e.FEISHU_ENCRYPT_KEY)
    problems.push('FEISHU_VERIFICATION_TOKEN: set, but FEISHU_ENCRYPT_KEY is not (callbacks are refused without it)');
  if (e.FEISHU_ENCRYPT_KEY && !(settings.PUBLIC_URL && settings.ACK_SECRET))
    problems.push(
      'FEISHU_ENCRYPT_KEY: set, but PUBLIC_URL and ACK_SECRET are not (the Acknowledge button carries a signed acknowledgement token)',
    );
  return problems;
}

/** The app's configuration, or `undefined` without `FEISHU_APP_ID` (used after {@link feishuAppProblems} found none). */
function feishuAppConfig(e: Env): FeishuAppConfig | undefined {
  if (!e.FEISHU_APP_ID || !e.FEISHU_APP_SECRET) return undefined;
  return {
    appId: e.FEISHU_APP_ID,
    appSecret: new Secret(e.FEISHU_APP_SECRET),
    ...(e.FEISHU_CHAT_ID && { chatId: e.FEISHU_CHAT_ID }),
    apiUrl: e.FEISHU_API_URL ?? FEISHU_API_URL,
    ...(e.FEISHU_ENCRYPT_KEY && { encryptKey: new Secret(e.FEISHU_ENCRYPT_KEY) }),
    ...(e.FEISHU_VERIFICATION_TOKEN && { verificationToken: new Secret(e.FEISHU_VERIFICATION_TOKEN) }),
  };
}

/** The settings an Open API error of the app names. */
export function appSettingNames(chat: string, mention: string): FeishuAppSettingNames {
  return { credentials: 'FEISHU_APP_ID and FEISHU_APP_SECRET', chat, apiUrl: 'FEISHU_API_URL', mention };
}

/** The one API client and contact cache of the app, for its channels and its callback. */
export function feishuAppClient(config: FeishuAppConfig, now: () => number = Date.now): FeishuContacts {
  const api = new FeishuOpenApi({
    name: 'feishu-app',
    appId: config.appId,
    appSecret: config.appSecret,
    apiUrl: config.apiUrl,
    settings: appSettingNames('the chat setting (FEISHU_CHAT_ID or a feishu-app chatId)', 'the mention setting'),
    now,
  });
  return new FeishuContacts(api, now);
}

const schema = z.strictObject({
  type: z.literal('feishu-app'),
  /** The group the app sends this instance's cards to; the app's bot must be in it. */
  chatId: z.string().check(z.regex(CHAT_ID, { message: CHAT_ID_MESSAGE })),
  mention: mentionField('feishu-app'),
  urgent: z.optional(z.enum(['app', 'sms', 'phone'], { message: 'must be one of app, sms, phone' })),
  ...renderFields,
});
export type FeishuAppSpec = z.infer<typeof schema>;
export type FeishuAppInstance = InstanceBase & {
  type: 'feishu-app';
  chatId: string;
  mention?: string[];
  urgent?: UrgentKind;
};

export const feishuApp = {
  schema,
  mentions: 'feishu-app',
  secretNames: () => [],
  resolve(name, spec, ctx) {
    if (!ctx.settings.FEISHU_APP_ID || !ctx.settings.FEISHU_APP_SECRET) {
      ctx.problem('type', 'a feishu-app channel sends with the app of FEISHU_APP_ID and FEISHU_APP_SECRET: set both');
      return undefined;
    }
    if (spec.urgent && !spec.mention?.some((m) => m !== '@all'))
      ctx.problem(
        'urgent',
        'needs mention: [...] naming people (urgent escalation buzzes the people the card mentions)',
      );
    return {
      name,
      type: 'feishu-app',
      chatId: spec.chatId,
      ...(spec.mention && { mention: spec.mention }),
      ...(spec.urgent && { urgent: spec.urgent }),
      locale: spec.locale,
      digestAbove: spec.digestAbove,
    };
  },
  create: createFeishuAppInstance,
  env: envSettings({
    variables,
    secrets: ['FEISHU_APP_SECRET', 'FEISHU_ENCRYPT_KEY', 'FEISHU_VERIFICATION_TOKEN'],
    problems: feishuAppProblems,
    read: (v) => {
      const app = feishuAppConfig(v);
      return {
        channels: [app?.chatId ? { name: 'feishu', type: 'feishu-app' as const, chatId: app.chatId } : undefined],
        options: app,
      };
    },
  }),
} satisfies ChannelType<FeishuAppSpec, FeishuAppInstance> & { mentions: 'feishu-app' };

/**
 * @throws Error when `deps.feishuApp` is unset (the composition root must give app channels their client and card store)
 */
export function createFeishuAppInstance(c: FeishuAppInstance, deps: CreateDeps): Channel {
  const app = deps.feishuApp;
  if (!app)
    throw new Error(`${c.name}: a Feishu app channel needs the app's client and card store (CreateDeps.feishuApp)`);
  const now = deps.now ?? (() => new Date());
  return createFeishuAppChannel({
    name: c.name,
    chatId: c.chatId,
    locale: c.locale,
    digestAbove: c.digestAbove,
    mention: c.mention,
    urgent: c.urgent,
    ...app,
    now: () => now().getTime(),
  });
}
