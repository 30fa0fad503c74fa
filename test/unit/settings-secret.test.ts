import type { GetSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../shared/config.js';
import { withSecretSettings } from '../../shared/settings-secret.js';

function client(secretString: string) {
  const asked: string[] = [];
  return {
    asked,
    send: async (cmd: GetSecretValueCommand) => {
      asked.push(cmd.input.SecretId!);
      return { SecretString: secretString };
    },
  };
}

describe('withSecretSettings', () => {
  it('returns the environment untouched without SETTINGS_SECRET_ARN', async () => {
    const c = client('{}');
    const env = { PORT: '1' };
    expect(await withSecretSettings(env, c as never)).toBe(env);
    expect(c.asked).toEqual([]);
  });

  it('lays the known secret settings over the environment and ignores other keys', async () => {
    const c = client(JSON.stringify({ WEBHOOK_TOKEN: 'from-secret', SLACK_WEBHOOK_URL: 'https://hooks.slack.com/x', PORT: '1', FEISHU_SECRET: '' }));
    const env = await withSecretSettings({ SETTINGS_SECRET_ARN: 'arn:aws:secretsmanager:eu-west-1:1:secret:s', WEBHOOK_TOKEN: 'from-env', PORT: '2' }, c as never);
    expect(env).toMatchObject({ WEBHOOK_TOKEN: 'from-secret', SLACK_WEBHOOK_URL: 'https://hooks.slack.com/x', PORT: '2' });
    expect(env.FEISHU_SECRET).toBeUndefined();
    expect(c.asked).toEqual(['arn:aws:secretsmanager:eu-west-1:1:secret:s']);
  });

  it('names the setting, not the content, when the secret is not a JSON object', async () => {
    for (const bad of ['hunter2-plain', '["hunter2"]', '{"WEBHOOK_TOKEN": 42}']) {
      const err = await withSecretSettings({ SETTINGS_SECRET_ARN: 'arn' }, client(bad) as never).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as Error).message).toMatch(/SETTINGS_SECRET_ARN/);
      expect((err as Error).message).not.toMatch(/hunter2|42/);
    }
  });
});
