/**
 * Keyword security of a Feishu custom bot ("自定义关键词"): the stand-in refuses, with code 19024 as Feishu
 * does, every card whose text lacks the keyword. Every kind of card the channel sends must pass it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFeishuChannel, FEISHU_MAX_TITLE_CHARS } from '../../../shared/channels/feishu/index.js';
import { DeliveryError } from '../../../shared/channels/channel.js';
import type { Locale } from '../../../shared/core/locale.js';
import { Secret } from '../../../shared/core/secret.js';
import type { Notification } from '../../../shared/render/notification.js';
import { buildChannels } from '../../../shared/runtime/channels.js';
import { loadConfig } from '../../../shared/runtime/config.js';
import { fixtureNotification, stormNotification } from '../../helpers/notifications.js';
import { startFeishuPlatform, type FeishuPlatform } from './platforms.js';

const firing = (): Notification => ({
  ...fixtureNotification('firing-kv-cache-critical'),
  acknowledgeUrl: 'https://alerts.example.com/v1/ack/token',
});
const acknowledged = (): Notification => ({
  ...firing(),
  kind: 'acknowledged',
  acknowledgeUrl: undefined,
  alerts: firing().alerts.map((a) => ({
    ...a,
    acknowledgement: { by: 'zhang.wei', at: '2026-11-29T12:50:00.000Z', channel: 'feishu' },
  })),
});
const escalation = (): Notification => ({ ...firing(), kind: 'escalation' });
const resolved = (): Notification => fixtureNotification('resolved-queue-backlog-two-models');
const reduced = (): Notification => ({ ...firing(), reduced: true });

/** Every kind of card a custom bot sends, by name. */
const CARDS: [string, () => Notification][] = [
  ['firing', firing],
  ['acknowledged', acknowledged],
  ['escalation', escalation],
  ['resolved', resolved],
  ['storm digest', () => stormNotification(120)],
  ['reduced', reduced],
];

async function bot(keyword: string): Promise<FeishuPlatform> {
  return startFeishuPlatform({ keyword, secret: 'bot-signing-secret' });
}

describe('feishu custom bot with keyword security', () => {
  let zh: FeishuPlatform;
  let en: FeishuPlatform;
  beforeAll(async () => {
    [zh, en] = await Promise.all([bot('告警'), bot('PROD-ALERT')]);
  });
  afterAll(() => Promise.all([zh.close(), en.close()]));

  const channel = (platform: FeishuPlatform, options: { keyword?: string; locale?: Locale } = {}) =>
    createFeishuChannel({
      webhookUrl: new Secret(platform.url),
      secret: new Secret('bot-signing-secret'),
      ...options,
    });
  const lastTitle = (platform: FeishuPlatform) => platform.accepted.at(-1)!.card.header.title.content;

  it('without the keyword configured, the acknowledged and resolved cards are refused (19024): the failure this fixes', async () => {
    const c = channel(zh);
    await c.send(firing(), AbortSignal.timeout(5000));
    for (const n of [acknowledged(), resolved()]) {
      const err = await c.send(n, AbortSignal.timeout(5000)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DeliveryError);
      expect((err as DeliveryError).retryable).toBe(false);
      expect((err as Error).message).toContain('code 19024');
    }
  });

  it.each(CARDS)('the %s card carries the keyword 告警 and is accepted (zh-CN)', async (_kind, n) => {
    const before = zh.accepted.length;
    await channel(zh, { keyword: '告警' }).send(n(), AbortSignal.timeout(5000));
    expect(zh.accepted.length).toBe(before + 1);
    expect(lastTitle(zh)).toContain('告警');
  });

  it('puts the keyword first in brackets only where the title lacks it', async () => {
    const c = channel(zh, { keyword: '告警' });
    await c.send(firing(), AbortSignal.timeout(5000));
    expect(lastTitle(zh)).toBe('🔥 告警 · critical · VLLMKVCacheNearlyFull (1)');
    await c.send(acknowledged(), AbortSignal.timeout(5000));
    expect(lastTitle(zh)).toMatch(/^【告警】👀 /);
    await c.send(resolved(), AbortSignal.timeout(5000));
    expect(lastTitle(zh)).toMatch(/^【告警】✅ /);
  });

  it.each(CARDS)('the %s card carries an ASCII keyword in English and is accepted', async (_kind, n) => {
    const before = en.accepted.length;
    await channel(en, { keyword: 'PROD-ALERT', locale: 'en' }).send(n(), AbortSignal.timeout(5000));
    expect(en.accepted.length).toBe(before + 1);
    expect(lastTitle(en)).toMatch(/^\[PROD-ALERT\] /);
  });

  it('keeps the keyword when the title is cut to its limit, even one the alert name held past the cut', async () => {
    const n = firing();
    const long = `${'VLLMKVCacheNearlyFull'.repeat(8)}PROD-ALERT`;
    const named: Notification = {
      ...n,
      alerts: n.alerts.map((a) => ({ ...a, labels: { ...a.labels, alertname: long } })),
    };
    await channel(en, { keyword: 'PROD-ALERT', locale: 'en' }).send(named, AbortSignal.timeout(5000));
    const title = lastTitle(en);
    expect([...title].length).toBeLessThanOrEqual(FEISHU_MAX_TITLE_CHARS);
    expect(title).toMatch(/^\[PROD-ALERT\] /);
  });

  it('FEISHU_KEYWORD reaches the FEISHU_WEBHOOK_URL bot, and a routing-file instance takes its own keyword', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'keyword-'));
    const file = join(dir, 'routing.yml');
    writeFileSync(
      file,
      `channels:
  ops: { type: feishu, webhookUrl: { secret: OPS_HOOK }, signingSecret: { secret: OPS_SIGN }, keyword: PROD-ALERT, locale: en }
default: { channels: [feishu, ops] }
`,
    );
    const config = loadConfig({
      FEISHU_WEBHOOK_URL: zh.url,
      FEISHU_SECRET: 'bot-signing-secret',
      FEISHU_KEYWORD: '告警',
      ROUTING_FILE: file,
      OPS_HOOK: en.url,
      OPS_SIGN: 'bot-signing-secret',
    });
    rmSync(dir, { recursive: true, force: true });
    const channels = buildChannels(config);
    expect(channels.map((c) => c.name)).toEqual(['feishu', 'ops']);
    const before = [zh.accepted.length, en.accepted.length];
    for (const c of channels) await c.send(acknowledged(), AbortSignal.timeout(5000));
    expect([zh.accepted.length, en.accepted.length]).toEqual([before[0]! + 1, before[1]! + 1]);
    expect(lastTitle(zh)).toMatch(/^【告警】/);
    expect(lastTitle(en)).toMatch(/^\[PROD-ALERT\] /);
  });
});

describe('FEISHU_KEYWORD and keyword settings', () => {
  const problem = (env: Record<string, string>) => {
    try {
      loadConfig(env);
      return undefined;
    } catch (err) {
      return (err as Error).message;
    }
  };

  it('names the setting when the keyword has no bot or is longer than Feishu allows', () => {
    expect(problem({ FEISHU_KEYWORD: '告警' })).toContain('FEISHU_KEYWORD: set, but FEISHU_WEBHOOK_URL is not');
    expect(problem({ FEISHU_WEBHOOK_URL: 'https://open.feishu.cn/x', FEISHU_KEYWORD: '告'.repeat(21) })).toContain(
      'FEISHU_KEYWORD: must be at most 20 characters',
    );
    expect(problem({ FEISHU_WEBHOOK_URL: 'https://open.feishu.cn/x', FEISHU_KEYWORD: '告警' })).toBeUndefined();
  });
});
