/**
 * Reads the non-secret settings from CDK context (`cdk.json` "context", or `-c key=value` on the
 * command line) and checks them at synth time, so a typo fails `cdk synth` instead of the first alert.
 */
import { z } from 'zod';
import type { LogLevel } from '../shared/core/logger.js';
import type { PlainSettings } from './receiver.js';

const URL_KEYS = ['prometheusUrl', 'alertmanagerUrl', 'publicUrl', 'grafanaUrl'] as const;
const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];

/** Thrown by {@link settingsFromContext}; the message names the context key, e.g. `prometheusUrl: must be an http(s) URL`. */
export class ContextError extends Error {
  constructor(key: string, problem: string) {
    super(`${key}: ${problem} (set it in cdk.json "context" or with -c ${key}=...)`);
    this.name = 'ContextError';
  }
}

/**
 * Builds the receiver's plain settings from context values.
 * @param get looks up a context key, e.g. `(key) => app.node.tryGetContext(key)`; unset or `''` means "not given"
 * @returns only the settings that were given; URLs lose trailing slashes
 * @throws ContextError when a URL is not http(s), `logLevel` is not debug, info, warn or error, or `slackChannel` is not a channel id or name
 */
export function settingsFromContext(get: (key: string) => unknown): PlainSettings {
  const settings: PlainSettings = {};
  for (const key of URL_KEYS) {
    const value = given(get, key);
    if (value !== undefined) settings[key] = httpUrl(key, value);
  }
  const logLevel = given(get, 'logLevel');
  if (logLevel !== undefined) {
    if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) throw new ContextError('logLevel', `must be one of ${LOG_LEVELS.join(', ')}`);
    settings.logLevel = logLevel as LogLevel;
  }
  const slackChannel = given(get, 'slackChannel');
  if (slackChannel !== undefined) {
    // Same rule as the app's SLACK_CHANNEL, checked at synth so a typo fails before deploying.
    if (!/^#?[A-Za-z0-9_.-]{1,80}$/.test(slackChannel)) throw new ContextError('slackChannel', 'must be a Slack channel id (C0123456789) or name');
    settings.slackChannel = slackChannel;
  }
  return settings;
}

function given(get: (key: string) => unknown, key: string): string | undefined {
  const value = get(key);
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw new ContextError(key, 'must be a string');
  return value;
}

function httpUrl(key: string, value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ContextError(key, 'must be an http(s) URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ContextError(key, 'must be an http(s) URL');
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
 * Turns escalation on when context `escalationDelaySeconds` is given (e.g. `-c escalationDelaySeconds=900`).
 * @returns `undefined` when not given
 * @throws ContextError when it is not a positive number of seconds
 */
export function escalationFromContext(get: (key: string) => unknown): { delaySeconds: number } | undefined {
  const value = get('escalationDelaySeconds');
  if (value === undefined || value === null || value === '') return undefined;
  const seconds = Number(value);
  if (!Number.isFinite(seconds) || seconds <= 0) throw new ContextError('escalationDelaySeconds', 'must be a positive number of seconds');
  return { delaySeconds: seconds };
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
 * AMP via SNS (README, Amazon Managed Service for Prometheus): `ampTopicArn` subscribes the receiver to
 * that topic; `ampTopic=create` creates one (AMP allowed to publish), optionally for one workspace only
 * (`ampWorkspaceArn`).
 * @returns `undefined` when neither is given
 * @throws ContextError when the ARN is not a standard SNS topic's, `ampTopic` is not `create`, both are
 *   given, or `ampWorkspaceArn` is not a workspace ARN or comes without `ampTopic=create`
 */
export function ampFromContext(get: (key: string) => unknown): { topicArn?: string; workspaceArn?: string } | undefined {
  const topicArn = given(get, 'ampTopicArn');
  const create = given(get, 'ampTopic');
  const workspaceArn = given(get, 'ampWorkspaceArn');
  if (create !== undefined && create !== 'create') throw new ContextError('ampTopic', 'the only value is "create" (or give ampTopicArn for an existing topic)');
  if (topicArn !== undefined && create !== undefined) throw new ContextError('ampTopic', 'give either ampTopic=create or ampTopicArn, not both');
  if (topicArn !== undefined && !SNS_TOPIC_ARN.test(topicArn)) throw new ContextError('ampTopicArn', 'must be a standard SNS topic ARN (arn:aws:sns:<region>:<account>:<name>)');
  if (workspaceArn !== undefined && create === undefined) throw new ContextError('ampWorkspaceArn', 'only with ampTopic=create (an existing topic keeps its own policy)');
  if (workspaceArn !== undefined && !APS_WORKSPACE_ARN.test(workspaceArn)) throw new ContextError('ampWorkspaceArn', 'must be an AMP workspace ARN (arn:aws:aps:<region>:<account>:workspace/<id>)');
  if (topicArn === undefined && create === undefined) return undefined;
  return topicArn !== undefined ? { topicArn } : { workspaceArn };
}
