/**
 * In AWS, secret settings live in one Secrets Manager secret (a JSON object) whose ARN is in
 * `SETTINGS_SECRET_ARN`; the CDK stack creates it. They are read once at cold start and laid over
 * the environment before `loadConfig` validates everything together. The webhook tokens alone are
 * read again every {@link TOKEN_REFRESH_MS} ({@link secretTokenSource}), so a token rotation
 * reaches warm functions without a redeploy.
 *
 * @see https://docs.aws.amazon.com/secretsmanager/latest/apireference/API_GetSecretValue.html
 */
import { GetSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { TokenSource, WebhookTokens } from '../http/bearer.js';
import { ConfigError, webhookTokenSchema } from './config.js';
import type { Logger } from '../core/logger.js';
import { loadRoutingReader } from './routing-reader.js';
import { isBlank } from './settings-whitespace.js';
import { Secret } from '../core/secret.js';
import { CHANNEL_ENV } from '../channels/registry.js';

/** How long webhook tokens read from the settings secret are used before the secret is read again, milliseconds. */
export const TOKEN_REFRESH_MS = 60_000;

/**
 * The settings the secret may hold: the service's own, then every channel type's secret variables
 * (`CHANNEL_ENV`). Anything else in it is ignored.
 */
export const SECRET_SETTINGS: readonly string[] = [
  'WEBHOOK_TOKEN',
  'WEBHOOK_TOKEN_PREVIOUS',
  'ACK_SECRET',
  // Rotating ACK_SECRET: the old value and the end of its grace period travel together.
  'ACK_SECRET_PREVIOUS',
  'ACK_SECRET_PREVIOUS_UNTIL',
  // What requests to Prometheus and Alertmanager carry (shared/runtime/endpoint-settings.ts).
  'PROMETHEUS_BEARER_TOKEN',
  'PROMETHEUS_BASIC_AUTH',
  'PROMETHEUS_HEADERS',
  'ALERTMANAGER_BEARER_TOKEN',
  'ALERTMANAGER_BASIC_AUTH',
  'ALERTMANAGER_HEADERS',
  ...CHANNEL_ENV.secrets,
];

/**
 * @param env the process environment
 * @param client Secrets Manager client (only used when `SETTINGS_SECRET_ARN` is set)
 * @returns `env` with the secret's settings laid over it: {@link SECRET_SETTINGS}, and the keys
 *   the routing file (`ROUTING_FILE`) references as `{ secret: NAME }`
 * @throws ConfigError when the secret is not a JSON object of strings (its content is never echoed)
 */
export async function withSecretSettings(
  env: Record<string, string | undefined>,
  client: Pick<SecretsManagerClient, 'send'>,
): Promise<Record<string, string | undefined>> {
  const arn = env.SETTINGS_SECRET_ARN;
  if (!arn) return env;
  const values = await readSecretObject(arn, client);
  const merged = { ...env };
  const routingNames = env.ROUTING_FILE?.trim()
    ? (await loadRoutingReader()).routingSecretNames(env.ROUTING_FILE.trim())
    : [];
  for (const name of [...SECRET_SETTINGS, ...routingNames]) {
    const value = (values as Record<string, unknown>)[name];
    if (value === undefined) continue;
    if (typeof value !== 'string') throw new ConfigError([`SETTINGS_SECRET_ARN: key ${name} must be a string`]);
    // Blank counts as absent, as in the environment; other whitespace is trimmed and reported by `loadConfig`.
    if (isBlank(value)) continue;
    merged[name] = value;
  }
  return merged;
}

/**
 * Reads the settings secret.
 * @returns its JSON object
 * @throws ConfigError when it is not a JSON object (its content is never echoed); the SDK's error when unreachable
 */
async function readSecretObject(
  arn: string,
  client: Pick<SecretsManagerClient, 'send'>,
): Promise<Record<string, unknown>> {
  const out = await client.send(new GetSecretValueCommand({ SecretId: arn }));
  let values: unknown;
  try {
    values = JSON.parse(out.SecretString ?? '');
  } catch {
    throw new ConfigError([
      'SETTINGS_SECRET_ARN: the secret value is not JSON (expected an object such as {"WEBHOOK_TOKEN": "..."})',
    ]);
  }
  if (typeof values !== 'object' || values === null || Array.isArray(values)) {
    throw new ConfigError(['SETTINGS_SECRET_ARN: the secret value must be a JSON object']);
  }
  return values as Record<string, unknown>;
}

/**
 * The webhook tokens, re-read from the settings secret at most every `refreshMs` (callers during a
 * read share it). A read that fails, or a secret whose token is invalid, keeps the tokens known
 * before (logged): an outage of Secrets Manager must neither open the webhook nor close it.
 * A secret without `WEBHOOK_TOKEN` closes it (503), as at cold start.
 * @param initial the tokens read at cold start (the validated configuration)
 * @param options.logger where a failed re-read is logged (its error's name or the invalid key, never a value)
 * @param options.refreshMs milliseconds between reads; default {@link TOKEN_REFRESH_MS}
 * @param options.now epoch milliseconds (tests)
 * @returns a source for `requireBearer`; it never throws
 */
export function secretTokenSource(
  arn: string,
  client: Pick<SecretsManagerClient, 'send'>,
  initial: WebhookTokens,
  { logger, refreshMs = TOKEN_REFRESH_MS, now = Date.now }: { logger: Logger; refreshMs?: number; now?: () => number },
): TokenSource {
  let tokens = initial;
  let readAt = now();
  let reading: Promise<WebhookTokens> | undefined;
  const read = async (): Promise<WebhookTokens> => {
    try {
      tokens = tokensOf(await readSecretObject(arn, client));
    } catch (err) {
      logger.error('settings secret not re-read', {
        detail: 'keeping the webhook tokens read before',
        error: err instanceof ConfigError ? err.message : (err as Error).name,
      });
    }
    readAt = now();
    return tokens;
  };
  return () => {
    if (now() - readAt < refreshMs) return tokens;
    reading ??= read().finally(() => (reading = undefined));
    return reading;
  };
}

function tokensOf(values: Record<string, unknown>): WebhookTokens {
  const problems: string[] = [];
  const token = (name: string): Secret | undefined => {
    const value = values[name];
    if (value === undefined || value === '') return undefined;
    const checked = webhookTokenSchema.safeParse(value);
    if (!checked.success) problems.push(`${name}: ${checked.error.issues[0]?.message ?? 'invalid'}`);
    return checked.success ? new Secret(checked.data) : undefined;
  };
  const current = token('WEBHOOK_TOKEN');
  const previous = token('WEBHOOK_TOKEN_PREVIOUS');
  if (problems.length) throw new ConfigError(problems.map((p) => `SETTINGS_SECRET_ARN: ${p}`));
  return { current, previous };
}
