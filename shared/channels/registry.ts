/**
 * Every channel type, one line each: adding a channel is its folder (settings, renderer, sender,
 * wire types) and one line here. The routing file's `type` is the key; the order is the order of
 * the routing file's error message (`type must be one of …`) and of the environment's channels.
 */
import type * as z from '../core/zod.js';
import { channelEnv } from './env.js';
import { consoleType } from './console.js';
import { dingtalk } from './dingtalk/settings.js';
import { feishu } from './feishu/settings.js';
import { feishuApp } from './feishu/app-settings.js';
import { pagerduty } from './pagerduty/settings.js';
import type { CreateDeps } from './settings.js';
import { slack } from './slack/settings.js';
import { slackApp } from './slack/app-settings.js';
import { sns } from './sns/settings.js';
import { wecom } from './wecom/settings.js';
import type { Channel } from './channel.js';
import type { MentionPlatform } from './mentions.js';

export const CHANNEL_TYPES = {
  slack,
  'slack-app': slackApp,
  feishu,
  'feishu-app': feishuApp,
  dingtalk,
  wecom,
  sns,
  console: consoleType,
  pagerduty,
} as const;

type Types = (typeof CHANNEL_TYPES)[keyof typeof CHANNEL_TYPES];
/** A routing-file channel entry, as validated. */
export type ChannelSpec = z.infer<Types['schema']>;
/** A routing-file channel with its secrets looked up. */
export type ChannelInstance = Parameters<Types['create']>[0];
/** The entry schemas of every type, for the routing file's discriminated union. */
export const CHANNEL_SCHEMAS = Object.values(CHANNEL_TYPES).map((t) => t.schema) as [
  Types['schema'],
  ...Types['schema'][],
];

/** The type of `spec.type`, loosened so one call serves every type (each type checks its own). */
function typeOf<T extends { type: keyof typeof CHANNEL_TYPES }>(entry: T) {
  return CHANNEL_TYPES[entry.type] as unknown as {
    secretNames(spec: T): string[];
    resolve(name: string, spec: T, ctx: Parameters<Types['resolve']>[2]): ChannelInstance | undefined;
    create(instance: T, deps: CreateDeps): Channel;
  };
}

/** Which `mention` entries a routing-file entry's type renders; `undefined`: it mentions nobody. */
export const mentionPlatformOf = (spec: { type: keyof typeof CHANNEL_TYPES }): MentionPlatform | undefined =>
  (CHANNEL_TYPES[spec.type] as { mentions?: MentionPlatform }).mentions;
/** The settings a routing-file entry names as secrets. */
export const secretNamesOf = (spec: ChannelSpec): string[] => typeOf(spec).secretNames(spec);
/** The instance of a routing-file entry, or `undefined` after recording its problems. */
export const resolveChannel = (
  name: string,
  spec: ChannelSpec,
  ctx: Parameters<Types['resolve']>[2],
): ChannelInstance | undefined => typeOf(spec).resolve(name, spec, ctx);
/** The channel of an instance. */
export const createChannel = (instance: ChannelInstance, deps: CreateDeps): Channel =>
  typeOf(instance).create(instance, deps);

type OptionsOf<T> = T extends { env: { read(values: never): { options?: infer O } } } ? O : never;
/** What each type's environment variables say beyond its instances, by type (`slack-app`: the signing secret). */
export type ChannelOptions = {
  [K in keyof typeof CHANNEL_TYPES as [OptionsOf<(typeof CHANNEL_TYPES)[K]>] extends [never] ? never : K]?: OptionsOf<
    (typeof CHANNEL_TYPES)[K]
  >;
};

/**
 * The environment variables of every channel type (`./env.ts`): their schema, the secret ones, and what they
 * yield. Configuration, the settings secret, the CDK stack and the docs check read it; none names a channel.
 */
export const CHANNEL_ENV = channelEnv<ChannelInstance, ChannelOptions>(CHANNEL_TYPES);

/**
 * The names the environment's channels may have, whatever the settings (`slack`, `feishu`, …: each type's own,
 * an app under its platform's): what a routing file may route to without defining it, known before the settings
 * are (`cdk synth`, where the secrets are not).
 */
export const ENV_CHANNEL_NAMES: readonly string[] = [
  ...new Set(
    Object.entries(CHANNEL_TYPES).flatMap(([type, t]) => ('env' in t && t.env ? [type.replace(/-app$/, '')] : [])),
  ),
];
