/**
 * Reads the non-secret settings from CDK context (`cdk.json` "context", or `-c key=value` on the
 * command line) and checks them at synth time, so a typo fails `cdk synth` instead of the first alert.
 */
import { z } from 'zod';
import type { LogLevel } from '../shared/core/logger.js';
import type { PlainSettings } from './receiver.js';
import { SETTING_NAMES, settingValueProblems } from '../shared/runtime/config.js';
import { SECRET_SETTINGS } from '../shared/runtime/settings-secret.js';
import { CHANNEL_NAME } from '../shared/routing/schema.js';

/** The URL context keys and the function setting each becomes, checked with that setting's own rules. */
const URL_KEYS = {
  prometheusUrl: 'PROMETHEUS_URL',
  alertmanagerUrl: 'ALERTMANAGER_URL',
  publicUrl: 'PUBLIC_URL',
  grafanaUrl: 'GRAFANA_URL',
} as const;
const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];

/** Thrown by {@link settingsFromContext}; the message names the context key, e.g. `prometheusUrl: must be an http(s) URL`. */
export class ContextError extends Error {
  /** @param where whether to say where the key is set (not for a key or setting that does not belong there) */
  constructor(key: string, problem: string, where = true) {
    super(`${key}: ${problem}${where ? ` (set it in cdk.json "context" or with -c ${key}=...)` : ''}`);
    this.name = 'ContextError';
  }
}

/**
 * Builds the receiver's plain settings from context values.
 * @param get looks up a context key, e.g. `(key) => app.node.tryGetContext(key)`; unset or `''` means "not given"
 * @returns only the settings that were given; URLs lose trailing slashes
 * @throws ContextError when a URL is one the function would refuse at start-up (not http(s), a UI or API path,
 *   a query or fragment where its setting allows none), `logLevel` is not debug, info, warn or error, or `slackChannel` is not a channel id or name
 */
export function settingsFromContext(get: (key: string) => unknown): PlainSettings {
  const settings: PlainSettings = {};
  for (const [key, setting] of Object.entries(URL_KEYS) as [keyof typeof URL_KEYS, string][]) {
    const value = given(get, key);
    if (value !== undefined) settings[key] = httpUrl(key, setting, value);
  }
  const logLevel = given(get, 'logLevel');
  if (logLevel !== undefined) {
    if (!(LOG_LEVELS as readonly string[]).includes(logLevel))
      throw new ContextError('logLevel', `must be one of ${LOG_LEVELS.join(', ')}`);
    settings.logLevel = logLevel as LogLevel;
  }
  const slackChannel = given(get, 'slackChannel');
  if (slackChannel !== undefined) {
    // Same rule as the app's SLACK_CHANNEL, checked at synth so a typo fails before deploying.
    if (!/^#?[A-Za-z0-9_.-]{1,80}$/.test(slackChannel))
      throw new ContextError('slackChannel', 'must be a Slack channel id (C0123456789) or name');
    settings.slackChannel = slackChannel;
  }
  Object.assign(settings, feishuFromContext(get));
  const other = otherSettingsFromContext(get);
  if (other) settings.other = other;
  return settings;
}

/** Settings that have a context key of their own: given in `settings`, the key is named instead. */
const OWN_KEYS: Record<string, string> = {
  ...Object.fromEntries(Object.entries(URL_KEYS).map(([key, setting]) => [setting, key])),
  LOG_LEVEL: 'logLevel',
  SLACK_CHANNEL: 'slackChannel',
  FEISHU_APP_ID: 'feishuAppId',
  FEISHU_CHAT_ID: 'feishuChatId',
  FEISHU_API_URL: 'feishuApiUrl',
  ROUTING_FILE: 'routingFile',
  ESCALATION_DELAY_SECONDS: 'escalationDelaySeconds',
  ESCALATION_CHANNELS: 'escalationChannels',
};

/** Settings the stack sets itself (its table, topics, schedules, secret), or that mean nothing in Lambda. */
const STACK_OWNED: Record<string, string> = {
  TABLE_NAME: "the stack's table",
  SNS_TOPIC_ARN: "the stack's alert topic",
  ESCALATION_SNS_TOPIC_ARN: "the stack's escalation topic (escalationDelaySeconds)",
  ESCALATION_SCHEDULE_GROUP: 'escalation schedules (escalationDelaySeconds)',
  ESCALATION_FUNCTION_ARN: 'escalation schedules (escalationDelaySeconds)',
  ESCALATION_ROLE_ARN: 'escalation schedules (escalationDelaySeconds)',
  ESCALATION_DEAD_LETTER_QUEUE_ARN: 'escalation schedules (escalationDelaySeconds)',
  FOLLOW_UP_SCHEDULE_GROUP: 'follow-up schedules (publicUrl)',
  FOLLOW_UP_ROLE_ARN: 'follow-up schedules (publicUrl)',
  FOLLOW_UP_DEAD_LETTER_QUEUE_ARN: 'follow-up schedules (publicUrl)',
  ALLOW_UNAUTHENTICATED: 'the WEBHOOK_TOKEN it generates into the settings secret',
  PORT: 'nothing: npm start only (Lambda is invoked through the Function URL)',
  DATA_DIR: "nothing: npm start's embedded store only (Lambda uses the stack's table)",
};

/**
 * Every other non-secret setting of the functions (context `settings`: a JSON object of setting name →
 * value, e.g. `-c 'settings={"TIME_ZONE":"Asia/Shanghai"}'`, or an object in cdk.json), set on the
 * receiver and the escalation check alike, each value checked with the function's own rule.
 * @returns `undefined` when not given
 * @throws ContextError naming `settings` and the setting: not a JSON object, not a setting of the functions, a
 *   secret one (it belongs in the settings secret, never in the template), one with a context key of its own,
 *   one the stack sets, or a value the functions would refuse at start-up
 */
export function otherSettingsFromContext(get: (key: string) => unknown): Record<string, string> | undefined {
  const raw = get('settings');
  if (raw === undefined || raw === null || raw === '') return undefined;
  const given = typeof raw === 'string' ? parseObject(raw) : raw;
  if (typeof given !== 'object' || given === null || Array.isArray(given))
    throw new ContextError('settings', 'must be a JSON object of setting name → value');
  const settings: Record<string, string> = {};
  for (const [name, value] of Object.entries(given)) {
    if (!['string', 'number', 'boolean'].includes(typeof value))
      throw new ContextError('settings', `${name}: the value must be a string, number or boolean`);
    const problem = otherSettingProblem(name, String(value));
    if (problem) throw new ContextError('settings', `${name}: ${problem}`, false);
    settings[name] = String(value).trim();
  }
  return settings;
}

function parseObject(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new ContextError('settings', 'must be a JSON object of setting name → value');
  }
}

/** Why `name` cannot be given in context `settings`, or its value's problems; `undefined` when it can. */
function otherSettingProblem(name: string, value: string): string | undefined {
  if (!SETTING_NAMES.includes(name)) return 'not a setting of the functions (docs/settings.md lists them)';
  if (SECRET_SETTINGS.includes(name))
    return 'a secret setting: put it in the settings secret (output SettingsSecretArn), never in the template';
  if (OWN_KEYS[name]) return `give it with the context key ${OWN_KEYS[name]}`;
  if (STACK_OWNED[name]) return `the stack sets it: ${STACK_OWNED[name]}`;
  const problems = settingValueProblems(name, value);
  return problems.length ? problems.join('; ') : undefined;
}

/** The Feishu app's plain settings (its secret and callback keys live in the settings secret), checked like the app's. */
function feishuFromContext(get: (key: string) => unknown): PlainSettings {
  const settings: PlainSettings = {};
  const appId = given(get, 'feishuAppId');
  if (appId !== undefined && !/^cli_[0-9A-Za-z]{4,64}$/.test(appId))
    throw new ContextError('feishuAppId', "must be the Feishu app's App ID (cli_…)");
  const chatId = given(get, 'feishuChatId');
  if (chatId !== undefined && !/^oc_[0-9A-Za-z]{8,64}$/.test(chatId))
    throw new ContextError('feishuChatId', 'must be a Feishu chat_id (oc_…)');
  const apiUrl = given(get, 'feishuApiUrl');
  if (apiUrl !== undefined && !/^https:\/\/[^/]+\/open-apis\/?$/.test(apiUrl))
    throw new ContextError(
      'feishuApiUrl',
      'must be https://open.feishu.cn/open-apis/ or https://open.larksuite.com/open-apis/',
    );
  if (appId) settings.feishuAppId = appId;
  if (chatId) settings.feishuChatId = chatId;
  if (apiUrl) settings.feishuApiUrl = apiUrl;
  return settings;
}

function given(get: (key: string) => unknown, key: string): string | undefined {
  const value = get(key);
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw new ContextError(key, 'must be a string');
  return value;
}

/** `value` with trailing slashes trimmed, or a {@link ContextError} naming the key in the function's own words. */
function httpUrl(key: string, setting: string, value: string): string {
  const problems = settingValueProblems(setting, value);
  if (problems.length) throw new ContextError(key, problems.join('; '));
  return value.replace(/\/+$/, '');
}

/**
 * The routing file to ship (context `routingFile`, a path relative to where `cdk` runs).
 * @returns `undefined` when not given
 * @throws ContextError when it is not a string
 */
export function routingFileFromContext(get: (key: string) => unknown): string | undefined {
  return given(get, 'routingFile');
}

/**
 * Turns escalation on when context `escalationDelaySeconds` is given (e.g. `-c escalationDelaySeconds=900`);
 * `escalationChannels` (comma-separated channel instances of the routing file, e.g.
 * `-c escalationChannels=oncall-feishu,oncall-pd`) adds them as escalation targets (`ESCALATION_CHANNELS`).
 * @returns `undefined` when `escalationDelaySeconds` is not given
 * @throws ContextError when the delay is not a positive number of seconds, a channel name is not one the
 *   routing file allows, or `escalationChannels` comes without `escalationDelaySeconds`
 */
export function escalationFromContext(
  get: (key: string) => unknown,
): { delaySeconds: number; channels?: string[] } | undefined {
  const value = get('escalationDelaySeconds');
  const channels = given(get, 'escalationChannels')
    ?.split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  if (value === undefined || value === null || value === '') {
    if (channels?.length)
      throw new ContextError('escalationChannels', 'only with escalationDelaySeconds (escalation is off without it)');
    return undefined;
  }
  const seconds = Number(value);
  if (!Number.isFinite(seconds) || seconds <= 0)
    throw new ContextError('escalationDelaySeconds', 'must be a positive number of seconds');
  const bad = (channels ?? []).filter((name) => !CHANNEL_NAME.test(name));
  if (bad.length) throw new ContextError('escalationChannels', `not a channel instance name: ${bad.join(', ')}`);
  return { delaySeconds: seconds, ...(channels?.length && { channels: [...new Set(channels)] }) };
}

/**
 * The address subscribed to the ops topic (context `alarmEmail`, e.g. `-c alarmEmail=oncall@example.com`).
 * @returns `undefined` when not given
 * @throws ContextError when it is not an e-mail address
 */
export function alarmEmailFromContext(get: (key: string) => unknown): string | undefined {
  const value = given(get, 'alarmEmail');
  if (value === undefined) return undefined;
  if (!z.email().safeParse(value).success) throw new ContextError('alarmEmail', 'must be an e-mail address');
  return value;
}

/** An SNS topic ARN in any partition (`arn:aws:sns:eu-west-1:123456789012:amp-alerts`); FIFO topics excluded (AMP needs a standard topic). */
const SNS_TOPIC_ARN = /^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}$/;
/** An AMP workspace ARN (`arn:aws:aps:eu-west-1:123456789012:workspace/ws-…`). */
const APS_WORKSPACE_ARN = /^arn:aws[a-z-]*:aps:[a-z0-9-]+:\d{12}:workspace\/[A-Za-z0-9-]+$/;

/**
 * AMP via SNS (docs/amp.md): `ampTopicArn` subscribes the receiver to
 * that topic; `ampTopic=create` creates one (AMP allowed to publish), optionally for one workspace only
 * (`ampWorkspaceArn`, which on its own or with `ampTopicArn` only sets what is queried: see
 * {@link ampWorkspaceFromContext}).
 * @returns `undefined` when neither topic key is given
 * @param target the account and region the stack deploys to, when known at synth: a given topic must be there
 *   (the subscription's dead-letter queue must be in the topic's account and region)
 * @throws ContextError when the ARN is not a standard SNS topic's or is in another account or region than
 *   `target`, `ampTopic` is not `create`, both are given, or `ampWorkspaceArn` is not a workspace ARN
 */
export function ampFromContext(
  get: (key: string) => unknown,
  target: { region?: string; account?: string } = {},
): { topicArn?: string; workspaceArn?: string } | undefined {
  const topicArn = given(get, 'ampTopicArn');
  const create = given(get, 'ampTopic');
  const workspaceArn = workspaceArnOf(get);
  if (create !== undefined && create !== 'create')
    throw new ContextError('ampTopic', 'the only value is "create" (or give ampTopicArn for an existing topic)');
  if (topicArn !== undefined && create !== undefined)
    throw new ContextError('ampTopic', 'give either ampTopic=create or ampTopicArn, not both');
  if (topicArn !== undefined && !SNS_TOPIC_ARN.test(topicArn))
    throw new ContextError('ampTopicArn', 'must be a standard SNS topic ARN (arn:aws:sns:<region>:<account>:<name>)');
  if (topicArn !== undefined) {
    const [, , , region, account] = topicArn.split(':');
    const elsewhere = [
      target.region && region !== target.region && `region ${region}, not ${target.region}`,
      target.account && account !== target.account && `account ${account}, not ${target.account}`,
    ].filter(Boolean);
    if (elsewhere.length)
      throw new ContextError(
        'ampTopicArn',
        `the topic is in ${elsewhere.join(' and ')} where the stack deploys: SNS needs the subscription's dead-letter queue in the topic's account and region. Deploy the stack there, or use -c ampTopic=create and point AMP at the new topic`,
      );
  }
  if (topicArn === undefined && create === undefined) return undefined;
  return topicArn !== undefined ? { topicArn } : { workspaceArn };
}

/**
 * The AMP workspace the receiver queries (context `ampWorkspaceArn`): it sets `PROMETHEUS_URL` and
 * `PROMETHEUS_SIGV4_REGION` (`amp.ts`), so `prometheusUrl` may not be given with it.
 * @returns `undefined` when not given
 * @throws ContextError when it is not a workspace ARN, or comes with `prometheusUrl`
 */
export function ampWorkspaceFromContext(get: (key: string) => unknown): string | undefined {
  const workspaceArn = workspaceArnOf(get);
  if (workspaceArn !== undefined && given(get, 'prometheusUrl') !== undefined)
    throw new ContextError(
      'ampWorkspaceArn',
      "sets PROMETHEUS_URL to the workspace's query endpoint itself: drop prometheusUrl, or drop ampWorkspaceArn to query another Prometheus",
    );
  return workspaceArn;
}

function workspaceArnOf(get: (key: string) => unknown): string | undefined {
  const workspaceArn = given(get, 'ampWorkspaceArn');
  if (workspaceArn !== undefined && !APS_WORKSPACE_ARN.test(workspaceArn))
    throw new ContextError(
      'ampWorkspaceArn',
      'must be an AMP workspace ARN (arn:aws:aps:<region>:<account>:workspace/<id>)',
    );
  return workspaceArn;
}

/** What `vpcFromContext` reads: the functions' network in a VPC of the user's (docs/deploy-aws.md). */
export interface VpcContext {
  vpcId: string;
  subnetIds: string[];
  /** Unset: the stack makes one (all outbound allowed, nothing inbound). */
  securityGroupIds?: string[];
  /** The route tables of those subnets, for the DynamoDB gateway endpoint; unset: no gateway endpoint. */
  routeTableIds?: string[];
  /** Interface endpoints for Secrets Manager, SNS and EventBridge Scheduler (and AMP's query API with a workspace). */
  interfaceEndpoints: boolean;
}

const ID_LISTS = {
  vpcSubnetIds: /^subnet-[0-9a-f]{8,17}$/,
  vpcSecurityGroupIds: /^sg-[0-9a-f]{8,17}$/,
  vpcRouteTableIds: /^rtb-[0-9a-f]{8,17}$/,
} as const;

/** A comma-separated list of ids (`subnet-…,subnet-…`); `undefined` when not given. */
function idList(get: (key: string) => unknown, key: keyof typeof ID_LISTS): string[] | undefined {
  const value = given(get, key);
  if (value === undefined) return undefined;
  const ids = value.split(',').map((s) => s.trim());
  const bad = ids.filter((id) => !ID_LISTS[key].test(id));
  if (bad.length) throw new ContextError(key, `not an id of the form ${ID_LISTS[key].source}: ${bad.join(', ')}`);
  return ids;
}

/**
 * Puts every function into a VPC of the user's: context `vpcId` and `vpcSubnetIds` (comma-separated, the
 * private subnets with a route to Prometheus, Alertmanager and — through a NAT — the chat platforms), with
 * optional `vpcSecurityGroupIds`, `vpcRouteTableIds` (the DynamoDB gateway endpoint) and
 * `vpcInterfaceEndpoints=true`.
 * @returns `undefined` when `vpcId` is not given
 * @throws ContextError when `vpcId` comes without `vpcSubnetIds` (or the reverse), an id is malformed, or
 *   `vpcInterfaceEndpoints` is not true or false
 */
export function vpcFromContext(get: (key: string) => unknown): VpcContext | undefined {
  const vpcId = given(get, 'vpcId');
  const subnetIds = idList(get, 'vpcSubnetIds');
  const securityGroupIds = idList(get, 'vpcSecurityGroupIds');
  const routeTableIds = idList(get, 'vpcRouteTableIds');
  const endpoints = given(get, 'vpcInterfaceEndpoints');
  if (vpcId === undefined) {
    const stray = (
      [
        ['vpcSubnetIds', subnetIds],
        ['vpcSecurityGroupIds', securityGroupIds],
        ['vpcRouteTableIds', routeTableIds],
        ['vpcInterfaceEndpoints', endpoints],
      ] as const
    ).find(([, v]) => v !== undefined);
    if (stray) throw new ContextError(stray[0], 'only with vpcId (the VPC the functions join)');
    return undefined;
  }
  if (!/^vpc-[0-9a-f]{8,17}$/.test(vpcId)) throw new ContextError('vpcId', 'must be a VPC id (vpc-0123456789abcdef0)');
  if (!subnetIds)
    throw new ContextError(
      'vpcSubnetIds',
      'vpcId needs the subnets the functions run in: -c vpcSubnetIds=subnet-…,subnet-… (private subnets, two or more Availability Zones)',
    );
  if (endpoints !== undefined && endpoints !== 'true' && endpoints !== 'false')
    throw new ContextError('vpcInterfaceEndpoints', 'must be true or false');
  return { vpcId, subnetIds, securityGroupIds, routeTableIds, interfaceEndpoints: endpoints === 'true' };
}

/** A key that can only be one of ours: a plain identifier (CDK's own keys carry `:`, `/`, `@` or `-`). */
const PLAIN_KEY = /^[A-Za-z][A-Za-z0-9]*$/;

/**
 * The context keys the readers of this module ask for, found by asking each with nothing given.
 * @returns e.g. `prometheusUrl`, `escalationDelaySeconds`, `vpcId`, …
 */
export function contextKeys(): Set<string> {
  const keys = new Set<string>();
  const record = (key: string) => {
    keys.add(key);
    return undefined;
  };
  for (const reader of [
    settingsFromContext,
    routingFileFromContext,
    escalationFromContext,
    alarmEmailFromContext,
    ampFromContext,
    vpcFromContext,
  ])
    reader(record);
  return keys;
}

/**
 * Refuses a plain context key this stack does not read (`-c prometheusURL=…`): otherwise it is ignored and
 * the setting it was meant to give is silently missing from the deployed functions.
 * @param given the keys in the app's context (cdk.json "context" and `-c`)
 * @throws ContextError naming the key, and the key it differs from only in case when there is one
 */
export function refuseUnknownContextKeys(given: Iterable<string>): void {
  const known = contextKeys();
  for (const key of given) {
    if (known.has(key) || !PLAIN_KEY.test(key)) continue;
    const meant = [...known].find((k) => k.toLowerCase() === key.toLowerCase());
    throw new ContextError(
      key,
      meant
        ? `not a context key this stack reads; did you mean ${meant}?`
        : 'not a context key this stack reads (docs/settings.md lists them; a secret setting goes in the settings ' +
            'secret, any other setting in -c settings={...})',
      false,
    );
  }
}
