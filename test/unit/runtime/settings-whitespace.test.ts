/**
 * Settings pasted with surrounding whitespace, or read from a file with a trailing newline (a
 * Kubernetes secret from `--from-file`, `$(cat token)` in a unit file, a Secrets Manager value typed
 * with a newline): each is trimmed and named in a warning (never its value), so a signature, a bearer
 * token or a link never silently carries the stray characters. Environment and settings secret alike.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AckLinks } from '../../../shared/ack/links.js';
import { loadConfig } from '../../../shared/runtime/config.js';
import { withSecretSettings } from '../../../shared/runtime/settings-secret.js';
import { envChannel } from '../../helpers/config.js';

const ACK_SECRET = 'ack-secret-0123456789abcdefghijklmnop';
const TOKEN = 'webhook-token-0123456789';
const dir = mkdtempSync(join(tmpdir(), 'settings-ws-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const settingsOf = (warnings: readonly { setting: string }[]) => warnings.map((w) => w.setting).sort();

describe('settings with surrounding whitespace', () => {
  it('trims secrets, tokens and URLs, and names each trimmed setting in a warning without its value', () => {
    const config = loadConfig({
      ACK_SECRET: `${ACK_SECRET}\n`,
      WEBHOOK_TOKEN: ` ${TOKEN}\r\n`,
      PUBLIC_URL: 'https://ops.example.com/alerts\n',
      FEISHU_WEBHOOK_URL: '\thttps://open.feishu.cn/open-apis/bot/v2/hook/abc ',
      FEISHU_SECRET: 'feishu-sign-secret\n',
      ALERTMANAGER_URL: 'http://alertmanager:9093/ ',
      PORT: '8080',
    });
    expect(config.ackSecret?.reveal()).toBe(ACK_SECRET);
    expect(config.webhookToken?.reveal()).toBe(TOKEN);
    expect(config.publicUrl).toBe('https://ops.example.com/alerts');
    expect(envChannel(config, 'feishu')?.webhookUrl.reveal()).toBe('https://open.feishu.cn/open-apis/bot/v2/hook/abc');
    expect(envChannel(config, 'feishu')?.signingSecret?.reveal()).toBe('feishu-sign-secret');
    expect(config.alertmanagerUrl).toBe('http://alertmanager:9093');
    expect(settingsOf(config.warnings)).toEqual([
      'ACK_SECRET',
      'ALERTMANAGER_URL',
      'FEISHU_SECRET',
      'FEISHU_WEBHOOK_URL',
      'PUBLIC_URL',
      'WEBHOOK_TOKEN',
    ]);
    const printed = JSON.stringify(config.warnings);
    for (const value of [ACK_SECRET, TOKEN, 'feishu-sign-secret', 'hook/abc']) expect(printed).not.toContain(value);
    expect(config.warnings[0]!.problem).toMatch(/whitespace/);
  });

  it('signs links with the trimmed secret, so a link made by a process whose secret lacked the newline verifies', () => {
    const withNewline = loadConfig({ ACK_SECRET: `${ACK_SECRET}\n`, PUBLIC_URL: 'https://ops.example.com/alerts\n' });
    const without = loadConfig({ ACK_SECRET, PUBLIC_URL: 'https://ops.example.com/alerts' });
    const link = (c: typeof without) =>
      new AckLinks({ publicUrl: c.publicUrl!, keys: { current: c.ackSecret! }, ttlSeconds: 60 }).url(
        [{ fingerprint: 'fp', startsAt: '2026-11-29T12:00:00Z' }],
        'g',
        'slack',
        1_800_000_000_000,
      );
    expect(link(withNewline)).toBe(link(without));
    expect(link(withNewline)).toMatch(/^https:\/\/ops\.example\.com\/alerts\/v1\/ack\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
  });

  it('treats a setting that is only whitespace as unset, and says so', () => {
    const config = loadConfig({ SLACK_WEBHOOK_URL: '\n', ACK_SECRET: '  ' });
    expect(envChannel(config, 'slack')).toBeUndefined();
    expect(config.ackSecret).toBeUndefined();
    expect(settingsOf(config.warnings)).toEqual(['ACK_SECRET', 'SLACK_WEBHOOK_URL']);
  });

  it('warns about nothing when nothing was trimmed', () => {
    expect(loadConfig({ ACK_SECRET, WEBHOOK_TOKEN: TOKEN }).warnings).toEqual([]);
  });

  it('trims the settings a routing file references as secrets', () => {
    const path = join(dir, 'routing.yml');
    writeFileSync(
      path,
      'channels:\n  ops: { type: slack, webhookUrl: { secret: OPS_SLACK } }\ndefault: { channels: [ops] }\n',
    );
    const config = loadConfig({ ROUTING_FILE: `${path}\n`, OPS_SLACK: 'https://hooks.slack.com/services/T/B/ops\n' });
    const ops = config.routing!.channels[0]!;
    expect(ops.type === 'slack' && ops.webhookUrl.reveal()).toBe('https://hooks.slack.com/services/T/B/ops');
    expect(settingsOf(config.warnings)).toEqual(['OPS_SLACK', 'ROUTING_FILE']);
  });

  it('applies the same rule to the settings secret (AWS)', async () => {
    const secret = JSON.stringify({
      ACK_SECRET: `${ACK_SECRET}\n`,
      WEBHOOK_TOKEN: `${TOKEN}\n`,
      SLACK_WEBHOOK_URL: ' \n',
    });
    const env = await withSecretSettings(
      {
        SETTINGS_SECRET_ARN: 'arn:aws:secretsmanager:eu-west-1:1:secret:s',
        SLACK_WEBHOOK_URL: 'https://hooks.slack.com/services/T/B/env',
      },
      { send: async () => ({ SecretString: secret }) } as never,
    );
    const config = loadConfig(env);
    expect(config.ackSecret?.reveal()).toBe(ACK_SECRET);
    expect(config.webhookToken?.reveal()).toBe(TOKEN);
    expect(settingsOf(config.warnings)).toEqual(['ACK_SECRET', 'WEBHOOK_TOKEN']);
    // A key that is only whitespace is as good as absent: it does not replace the environment's value.
    expect(envChannel(config, 'slack')?.webhookUrl.reveal()).toBe('https://hooks.slack.com/services/T/B/env');
  });
});
