/**
 * Reads the non-secret settings from CDK context (`cdk.json` "context", or `-c key=value` on the
 * command line) and checks them at synth time, so a typo fails `cdk synth` instead of the first alert.
 */
import { z } from 'zod';
import type { LogLevel } from '../shared/core/logger.js';
import type { PlainSettings } from './receiver.js';

const URL_KEYS = ['prometheusUrl', 'alertmanagerUrl', 'publicUrl'] as const;
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
 * @throws ContextError when a URL is not http(s) or `logLevel` is not debug, info, warn or error
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
