import type { GetSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../shared/runtime/config.js';
import { createLogger } from '../../../shared/core/logger.js';
import { Secret } from '../../../shared/core/secret.js';
import { secretTokenSource, withSecretSettings } from '../../../shared/runtime/settings-secret.js';

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
    const c = client(
      JSON.stringify({
        WEBHOOK_TOKEN: 'from-secret',
        SLACK_WEBHOOK_URL: 'https://hooks.slack.com/x',
        PORT: '1',
        FEISHU_SECRET: '',
      }),
    );
    const env = await withSecretSettings(
      { SETTINGS_SECRET_ARN: 'arn:aws:secretsmanager:eu-west-1:1:secret:s', WEBHOOK_TOKEN: 'from-env', PORT: '2' },
      c as never,
    );
    expect(env).toMatchObject({
      WEBHOOK_TOKEN: 'from-secret',
      SLACK_WEBHOOK_URL: 'https://hooks.slack.com/x',
      PORT: '2',
    });
    expect(env.FEISHU_SECRET).toBeUndefined();
    expect(c.asked).toEqual(['arn:aws:secretsmanager:eu-west-1:1:secret:s']);
  });

  it('names the setting, not the content, when the secret is not a JSON object', async () => {
    for (const bad of ['hunter2-plain', '["hunter2"]', '{"WEBHOOK_TOKEN": 42}']) {
      const err = await withSecretSettings({ SETTINGS_SECRET_ARN: 'arn' }, client(bad) as never).catch(
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as Error).message).toMatch(/SETTINGS_SECRET_ARN/);
      expect((err as Error).message).not.toMatch(/hunter2|42/);
    }
  });
});

describe('secretTokenSource (webhook tokens re-read at run time)', () => {
  const OLD = 'old-token-0123456789abcdef';
  const NEW = 'new-token-0123456789abcdef';

  function setup() {
    let clock = 0;
    let reply: () => Promise<{ SecretString: string }> = async () => ({
      SecretString: JSON.stringify({ WEBHOOK_TOKEN: OLD }),
    });
    const reads: number[] = [];
    const lines: string[] = [];
    const source = secretTokenSource(
      'arn',
      { send: async () => (reads.push(clock), reply()) } as never,
      { current: new Secret(OLD) },
      { logger: createLogger('info', (l) => lines.push(l)), refreshMs: 60_000, now: () => clock },
    );
    const reveal = async () => {
      const t = await source();
      return { current: t.current?.reveal(), previous: t.previous?.reveal() };
    };
    return { reads, lines, reveal, tick: (ms: number) => (clock += ms), reply: (r: typeof reply) => (reply = r) };
  }

  it("uses the cold-start tokens until the refresh interval, then the secret's, with the previous one during a rotation", async () => {
    const s = setup();
    s.reply(async () => ({ SecretString: JSON.stringify({ WEBHOOK_TOKEN: NEW, WEBHOOK_TOKEN_PREVIOUS: OLD }) }));
    s.tick(59_000);
    expect(await s.reveal()).toEqual({ current: OLD, previous: undefined });
    expect(s.reads).toEqual([]);
    s.tick(1_000);
    expect(await s.reveal()).toEqual({ current: NEW, previous: OLD });
    expect(await s.reveal()).toEqual({ current: NEW, previous: OLD });
    expect(s.reads).toHaveLength(1);
  });

  it('keeps the known tokens when the read fails or the new token is invalid, naming the key and never the value', async () => {
    const s = setup();
    s.reply(async () => {
      throw Object.assign(new Error('hunter2 endpoint down'), { name: 'TimeoutError' });
    });
    s.tick(60_000);
    expect(await s.reveal()).toEqual({ current: OLD, previous: undefined });
    s.reply(async () => ({ SecretString: JSON.stringify({ WEBHOOK_TOKEN: 'short' }) }));
    s.tick(60_000);
    expect(await s.reveal()).toEqual({ current: OLD, previous: undefined });
    expect(s.reads).toHaveLength(2);
    expect(s.lines.map((l) => JSON.parse(l).event)).toEqual([
      'settings secret not re-read',
      'settings secret not re-read',
    ]);
    expect(s.lines[1]).toMatch(/WEBHOOK_TOKEN: must be at least 16 characters/);
    expect(s.lines.join('\n')).not.toMatch(/hunter2|short"/);
  });

  it('closes when the token is removed from the secret (fail closed, as at cold start)', async () => {
    const s = setup();
    s.reply(async () => ({ SecretString: '{}' }));
    s.tick(60_000);
    expect(await s.reveal()).toEqual({ current: undefined, previous: undefined });
  });
});
