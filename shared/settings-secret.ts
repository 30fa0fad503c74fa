/**
 * In AWS, secret settings live in one Secrets Manager secret (a JSON object) whose ARN is in
 * `SETTINGS_SECRET_ARN`; the CDK stack creates it. They are read once at cold start and laid over
 * the environment before `loadConfig` validates everything together.
 *
 * @see https://docs.aws.amazon.com/secretsmanager/latest/apireference/API_GetSecretValue.html
 */
import { GetSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { ConfigError } from './config.js';
import { routingSecretNames } from './routing/load.js';
import { isBlank } from './settings-whitespace.js';

/** The settings the secret may hold. Anything else in it is ignored (and named in the error if it is the only content). */
export const SECRET_SETTINGS = [
  'WEBHOOK_TOKEN', 'SLACK_WEBHOOK_URL', 'FEISHU_WEBHOOK_URL', 'FEISHU_SECRET', 'ACK_SECRET',
  // Rotating ACK_SECRET: the old value and the end of its grace period travel together.
  'ACK_SECRET_PREVIOUS', 'ACK_SECRET_PREVIOUS_UNTIL', 'ESCALATION_SLACK_WEBHOOK_URL',
] as const;

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
  const out = await client.send(new GetSecretValueCommand({ SecretId: arn }));
  let values: unknown;
  try {
    values = JSON.parse(out.SecretString ?? '');
  } catch {
    throw new ConfigError(['SETTINGS_SECRET_ARN: the secret value is not JSON (expected an object such as {"WEBHOOK_TOKEN": "..."})']);
  }
  if (typeof values !== 'object' || values === null || Array.isArray(values)) {
    throw new ConfigError(['SETTINGS_SECRET_ARN: the secret value must be a JSON object']);
  }
  const merged = { ...env };
  const routingNames = env.ROUTING_FILE?.trim() ? routingSecretNames(env.ROUTING_FILE.trim()) : [];
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
