/**
 * What every channel folder declares about its settings, so that one line in `registry.ts` adds a
 * channel: its routing-file schema, the settings its secrets come from, how a validated entry
 * becomes an instance (secrets looked up), how an instance becomes a {@link Channel}, and, for a type
 * the environment can configure, its environment variables (`env`, see `./env.ts`).
 * Secrets are never written in the routing file: a webhook URL or signing secret is
 * `{ secret: NAME }`, the name of a setting that holds it (an environment variable for `npm start`,
 * a key of the settings secret in AWS).
 */
import type { SNSClient } from '@aws-sdk/client-sns';
import * as z from '../core/zod.js';
import { Secret } from '../core/secret.js';
import { optional, secretOf } from '../core/settings.js';
import type { DeclaredEnv } from './env.js';
import { MAX_DETAILED_ALERTS } from '../render/digest.js';
import { LOCALES, type Locale } from '../render/locale.js';
import type { Channel } from './channel.js';
import type { SlackThreadStore } from '../store/slack-threads.js';
import type { FeishuContacts } from './feishu/contacts.js';
import type { FeishuCardStore } from '../store/feishu-cards.js';
import type { PagerDutyStormStore } from '../store/pagerduty-storms.js';
import type { MentionPlatform } from './mentions.js';

/** Names of settings a secret reference may point at (environment variable syntax). */
export const SETTING_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `{ secret: NAME }` in the routing file: the setting that holds a secret value. */
export const secretRef = z.strictObject(
  {
    secret: z.string().check(
      z.regex(SETTING_NAME, {
        message: 'must name a setting (letters, digits and _, e.g. SLACK_ONCALL_WEBHOOK_URL)',
      }),
    ),
  },
  // A literal URL or secret here would put it in a file that is committed and bundled.
  {
    error: (issue) =>
      issue.code === 'invalid_type'
        ? 'must be { secret: SETTING_NAME }, naming the setting that holds the value, not the value itself'
        : undefined,
  },
);
export type SecretRef = z.infer<typeof secretRef>;

/** The render options every channel entry of the routing file may set. */
export const renderFields = {
  locale: z.optional(z.enum(LOCALES, { message: `must be one of ${LOCALES.join(', ')}` })),
  digestAbove: z.optional(
    z
      .number()
      .check(
        z.int(),
        z.minimum(1),
        z.maximum(MAX_DETAILED_ALERTS, { message: `must be an integer 1–${MAX_DETAILED_ALERTS}` }),
      ),
  ),
};

/** What every channel instance carries: its name (the delivery ledger's key) and render options. */
export interface InstanceBase {
  name: string;
  locale?: Locale;
  digestAbove?: number;
}

/** A group robot reached by a secret webhook URL, maybe signed, with a keyword and mentions (Feishu's custom bot, DingTalk's robot). */
export interface RobotSpec {
  webhookUrl: SecretRef;
  signingSecret?: SecretRef;
  keyword?: string;
  mention?: string[];
  locale?: Locale;
  digestAbove?: number;
}

/** Such a robot as resolved: its secrets read, the rest as given. */
export type RobotInstance<T extends string> = InstanceBase & {
  type: T;
  webhookUrl: Secret;
  signingSecret?: Secret;
  keyword?: string;
  mention?: string[];
};

/**
 * The registry's `secretNames` and `resolve` of a robot channel of `type`: both robots read the same fields, so
 * a field added to one is added to both here.
 */
export function robotEntry<T extends string>(type: T) {
  return {
    secretNames: (spec: RobotSpec): string[] => [
      spec.webhookUrl.secret,
      ...(spec.signingSecret ? [spec.signingSecret.secret] : []),
    ],
    resolve(name: string, spec: RobotSpec, ctx: ResolveContext): RobotInstance<T> | undefined {
      const webhookUrl = ctx.secret(spec.webhookUrl, 'webhookUrl', true);
      const signingSecret = spec.signingSecret && ctx.secret(spec.signingSecret, 'signingSecret', false);
      return (
        webhookUrl && {
          name,
          type,
          webhookUrl,
          signingSecret,
          ...(spec.keyword && { keyword: spec.keyword }),
          ...(spec.mention && { mention: spec.mention }),
          locale: spec.locale,
          digestAbove: spec.digestAbove,
        }
      );
    },
    /** An instance configured by environment variables (`<TYPE>_WEBHOOK_URL`, `_SECRET`, `_KEYWORD`). */
    fromEnv: (name: string, url: string, secret?: string, keyword?: string): RobotInstance<T> => ({
      name,
      type,
      webhookUrl: new Secret(url),
      signingSecret: secretOf(secret),
      ...(keyword && { keyword }),
    }),
  };
}

/** Looks up a routing-file entry's secrets and reports its problems, each naming the file, line and field. */
export interface ResolveContext {
  /**
   * The value of the setting `ref` names, or `undefined` after recording why not (unset; with `url`,
   * not an https URL, see {@link webhookUrlProblem}). The value never appears in a problem.
   */
  secret(ref: SecretRef, field: string, url: boolean): Secret | undefined;
  /** Records a problem with `field` of this entry. */
  problem(field: string, message: string): void;
  /** Every setting (environment and settings secret), for defaults such as `SNS_TOPIC_ARN`. */
  settings: Record<string, string | undefined>;
}

/** What channels need from outside the configuration. */
export interface CreateDeps {
  /** The SNS client for a topic (one per topic region). */
  snsClient(topicArn: string): SNSClient;
  /** Console output (default: stdout). */
  write?: (s: string) => void;
  /** Clock for Feishu signatures and Slack thread times. */
  now?: () => Date;
  /** What Slack-app channels need (required when one is configured). */
  slackApp?: {
    threads: SlackThreadStore;
    /** `SLACK_API_URL`, ending in `/`; unset: Slack's. */
    apiUrl?: string;
    /** The Web API client's own per-request time-out, milliseconds (the delivery's signal usually ends a request first). */
    timeoutMs: number;
    /** Problems that do not fail a delivery (a thread that could not be stored). */
    warn(message: string, fields: Record<string, unknown>): void;
  };
  /** What Feishu app channels need (required when one is configured): the app's client, the card store. */
  feishuApp?: FeishuAppDeps;
  /** Where PagerDuty channels remember their storms' alerts; unset: a storm's alerts are not remembered. */
  pagerDutyStorms?: PagerDutyStormStore;
}

/** What Feishu app channels need besides their instance (`CreateDeps.feishuApp`). */
export interface FeishuAppDeps {
  /** The app's API client and contact lookups (one per app). */
  contacts: FeishuContacts;
  cards: FeishuCardStore;
  /** `FEISHU_ENCRYPT_KEY` is set (callbacks verified): cards carry buttons. */
  interactive: boolean;
  /** `ALERTMANAGER_URL` is set. */
  silence: boolean;
  warn(message: string, fields: Record<string, unknown>): void;
}

/**
 * One channel type, as its folder declares it.
 * @typeParam Spec the routing-file entry, as validated by `schema`
 * @typeParam Instance the entry with its secrets looked up
 */
export interface ChannelType<Spec extends { type: string }, Instance extends InstanceBase & { type: Spec['type'] }> {
  /** The routing-file entry: a strict object whose `type` is this channel's literal. */
  schema: z.ZodMiniType<Spec>;
  /** Which `mention` entries the type renders (`shared/channels/mentions.ts`); unset: it mentions nobody. */
  mentions?: MentionPlatform;
  /** The settings the entry names as secrets (so the settings secret can lay them over the environment). */
  secretNames(spec: Spec): string[];
  /** The instance, or `undefined` when a problem was recorded in `ctx`. */
  resolve(name: string, spec: Spec, ctx: ResolveContext): Instance | undefined;
  create(instance: Instance, deps: CreateDeps): Channel;
  /** Its environment variables, when it can be configured by them (`./env.ts`). */
  env?: DeclaredEnv<Instance>;
}

/** Same rule as the `SLACK_WEBHOOK_URL` setting: https, or plain http to loopback, no `user:password@`. Never echoes the value. */
export function webhookUrlProblem(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an https URL';
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)))
    return 'must be an https URL (http only to loopback)';
  // fetch refuses a URL with user:password@ at every send: refused here, once, instead.
  if (url.username || url.password) return 'must not contain credentials (user:password@)';
  // The URL parser encodes a space (%20) rather than refusing it: a pasted value with a space or line break
  // inside would then fail at every send.
  if (/\s/.test(value.trim())) return 'must not contain spaces or line breaks (a value pasted in two parts?)';
  return undefined;
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

/** A webhook URL setting (unset or `""`: unset), refused as {@link webhookUrlProblem} says. */
export const webhookUrlSetting = () =>
  optional(
    z.string().check(
      z.superRefine((s, ctx) => {
        const problem = webhookUrlProblem(s);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      }),
    ),
  );
