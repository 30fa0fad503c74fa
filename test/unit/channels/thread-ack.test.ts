/**
 * Acknowledgement is per alert in a group's thread (the Slack app's, the Feishu app's card): an alert
 * that joins a group after another was acknowledged is unacknowledged, the state line says how many
 * still are, and its reply in the thread carries its own Acknowledge buttons or link (the top
 * message's are for the alerts it announced).
 */
import { describe, expect, it } from 'vitest';
import { renderAppReply, stateLine } from '../../../shared/channels/slack/app-render.js';
import { advance, type SlackThread } from '../../../shared/channels/slack/threads.js';
import type { Notification } from '../../../shared/render/notification.js';
import { fixtureNotification, manyAlertsNotification } from '../../helpers/notifications.js';
import {
  FEISHU_MAX_CALLBACK_VALUE_CHARS,
  FEISHU_MAX_CARD_BYTES,
  renderAppCard,
  renderAppReply as feishuReply,
  stateLine as feishuStateLine,
} from '../../../shared/channels/feishu/app-render.js';
import { AckLinks } from '../../../shared/ack/links.js';
import { signAckToken } from '../../../shared/ack/token.js';
import { Secret } from '../../../shared/core/secret.js';

const NOW = Date.parse('2026-11-30T12:10:00Z');
const two = fixtureNotification('firing-queue-backlog-two-models');
const [a, b] = two.alerts;
const thread: SlackThread = {
  channel: 'C0',
  ts: '1.000001',
  content: { text: 't', blocks: [{ type: 'header', text: { type: 'plain_text', text: 'h', emoji: true } }] },
  firing: [],
};
const only = (alert: typeof a): Notification => ({ ...two, alerts: [alert!] });
const resolvedOf = (n: Notification): Notification => ({
  ...n,
  status: 'resolved',
  alerts: n.alerts.map((x) => ({ ...x, status: 'resolved', endsAt: '2026-11-30T12:30:00Z' })),
});
const acked = (alert: typeof a, by: string): Notification => ({
  ...two,
  kind: 'acknowledged',
  alerts: [{ ...alert!, acknowledgement: { by, at: '2026-11-30T12:05:00.000Z', channel: 'slack' } }],
});

describe('per-alert acknowledgement in a Slack thread', () => {
  it('counts an alert joining an acknowledged group as unacknowledged, until it is acknowledged too', () => {
    const first = advance(advance(thread, only(a), NOW), acked(a, 'alice'), NOW);
    expect(stateLine(first)).toBe('🔥 *Firing* (1 alert) · 👀 Acknowledged by alice at 2026-11-30 12:05:00 UTC');
    const joined = advance(first, only(b), NOW);
    expect(stateLine(joined)).toBe(
      '🔥 *Firing* (2 alerts) · 👀 Acknowledged by alice at 2026-11-30 12:05:00 UTC · ⚠️ 1 of 2 not acknowledged',
    );
    const both = advance(joined, acked(b, 'bob'), NOW);
    expect(stateLine(both)).toBe('🔥 *Firing* (2 alerts) · 👀 Acknowledged by alice at 2026-11-30 12:05:00 UTC');
    // Idempotent, as a retried delivery needs.
    expect(advance(joined, only(b), NOW + 1)).toEqual(joined);
  });

  it('counts an acknowledged alert announced again (its silence ended) as unacknowledged', () => {
    const first = advance(advance(thread, only(a), NOW), acked(a, 'alice'), NOW);
    const again = advance(first, { ...only(a), generations: { [a!.fingerprint]: 1 } }, NOW);
    expect(stateLine(again)).toMatch(/1 of 1 not acknowledged$/);
  });

  it('writes the state line in Chinese for a zh-CN instance, without mrkdwn bold (Slack does not bold between CJK)', () => {
    const first = advance(advance(thread, only(a), NOW), acked(a, '张伟'), NOW);
    const joined = advance(first, only(b), NOW);
    expect(stateLine(joined, 'zh-CN')).toBe(
      '🔥 告警中（2 条） · 👀 由 张伟 于 2026-11-30 12:05:00 UTC 认领 · ⚠️ 2 条中 1 条未认领',
    );
    const closed = advance(advance(joined, { ...only(b), kind: 'escalation' }, NOW), resolvedOf(two), NOW);
    expect(stateLine(closed, 'zh-CN')).toBe(
      '✅ 已于 2026-11-30 12:30:00 UTC 恢复 · 👀 由 张伟 于 2026-11-30 12:05:00 UTC 认领 · 📣 已于 2026-11-30 12:10:00 UTC 升级',
    );
    // The same words as the Feishu card's state line.
    expect(stateLine(joined, 'zh-CN')).toBe(feishuStateLine(joined, 'zh-CN'));
    expect(stateLine(joined, 'en')).toBe(stateLine(joined));
  });

  it("gives a new firing alert's reply its own Acknowledge buttons; other replies have none", () => {
    const url = 'https://ack.example.com/v1/ack/token-of-b';
    const reply = renderAppReply({ ...only(b), acknowledgeUrl: url }, { locale: 'en' });
    const actions = reply.blocks.filter((x) => x.type === 'actions') as unknown as {
      elements: { action_id: string; value?: string; url?: string }[];
    }[];
    expect(actions).toHaveLength(1);
    expect(actions[0]!.elements.map((e) => e.action_id)).toEqual(['acknowledge', 'acknowledge_page']);
    expect(actions[0]!.elements[0]!.value).toBe('token-of-b');
    const followUp = renderAppReply({ ...acked(b, 'bob'), acknowledgeUrl: url }, { locale: 'en' });
    expect(followUp.blocks.some((x) => x.type === 'actions')).toBe(false);
    const resolved = renderAppReply(
      { ...only(b), status: 'resolved', alerts: [{ ...b!, status: 'resolved' }] },
      { locale: 'en' },
    );
    expect(resolved.blocks.some((x) => x.type === 'actions')).toBe(false);
  });
});

describe('per-alert acknowledgement on a Feishu card', () => {
  it('says on the state line how many alerts are not acknowledged, in each locale', () => {
    const joined = advance(advance(advance(thread, only(a), NOW), acked(a, 'alice'), NOW), only(b), NOW);
    expect(feishuStateLine(joined, 'en')).toMatch(/ · ⚠️ 1 of 2 not acknowledged$/);
    expect(feishuStateLine(joined, 'zh-CN')).toMatch(/ · ⚠️ 2 条中 1 条未认领$/);
    expect(feishuStateLine(advance(joined, acked(b, 'bob'), NOW), 'en')).not.toMatch(/not acknowledged/);
  });

  it("keeps a new firing alert's Acknowledge link in its reply; a follow-up's reply drops it", () => {
    const url = 'https://ack.example.com/v1/ack/token-of-b';
    const text = (n: Notification) => JSON.stringify(feishuReply(n, { locale: 'en' }));
    expect(text({ ...only(b), acknowledgeUrl: url })).toContain(url);
    expect(text({ ...acked(b, 'bob'), acknowledgeUrl: url })).not.toContain(url);
  });
});

describe('Feishu card buttons whose token is over-long', () => {
  // Links name no more than fits `MAX_LINK_TOKEN_CHARS` now; a token signed as 50 alerts of 256-byte
  // fingerprints was ~17 KB (a link of an older release, or any token over the button's limit).
  const keys = { current: new Secret('ack-secret-for-tests-0123456789abcdef') };
  const links = new AckLinks({ publicUrl: 'https://ack.example.com', keys, ttlSeconds: 3600 });
  const many = manyAlertsNotification(50);
  const longToken = signAckToken(
    {
      fingerprints: many.alerts.map((_, i) => `${String(i).padStart(3, '0')}${'f'.repeat(253)}`),
      group: many.groupKey,
      channel: 'feishu',
      issuedAt: NOW / 1000,
      expiresAt: NOW / 1000 + 3600,
    },
    keys,
  );
  const link = `https://ack.example.com/v1/ack/${longToken}`;
  const withLink: Notification = { ...many, acknowledgeUrl: link };
  const callbacks = (card: unknown) =>
    [...JSON.stringify(card).matchAll(/"value":\{"action":"[^"]*","token":"([^"]*)"/g)].map((m) => m[1]!);

  it('carry the token only within Feishu limits, else fall back to the page link, and the card fits', () => {
    expect(new URL(link).pathname.length).toBeGreaterThan(FEISHU_MAX_CALLBACK_VALUE_CHARS);
    const stored = renderAppCard(withLink, { locale: 'en' }, { interactive: true, silence: true });
    for (const token of callbacks(stored)) expect(token.length).toBeLessThanOrEqual(FEISHU_MAX_CALLBACK_VALUE_CHARS);
    expect(callbacks(stored)).toEqual([]);
    expect(JSON.stringify(stored.buttons)).toContain(link);
    const bytes = Buffer.byteLength(JSON.stringify({ ...stored.card, buttons: stored.buttons }), 'utf8');
    expect(bytes).toBeLessThanOrEqual(FEISHU_MAX_CARD_BYTES);
  });

  it('keep the callback buttons for an ordinary token', () => {
    const short = { ...two, acknowledgeUrl: links.url(two.alerts, two.groupKey, 'feishu', NOW) };
    const stored = renderAppCard(short, { locale: 'en' }, { interactive: true, silence: true });
    expect(callbacks(stored)).toHaveLength(2);
  });
});
