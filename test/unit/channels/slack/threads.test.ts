import { describe, expect, it } from 'vitest';
import { renderAppMessage, stateLine, withState } from '../../../../shared/channels/slack/app-render.js';
import { SLACK_MAX_BLOCKS } from '../../../../shared/channels/slack/index.js';
import { advance, startsNewThread, type SlackThread } from '../../../../shared/channels/slack/threads.js';
import type { Notification } from '../../../../shared/render/notification.js';
import { fixtureNotification, manyAlertsNotification } from '../../../helpers/notifications.js';

const NOW = Date.parse('2026-11-30T12:10:00Z');
const two = fixtureNotification('firing-queue-backlog-two-models');
const [a, b] = two.alerts;
const thread: SlackThread = {
  channel: 'C0',
  ts: '1.000001',
  content: { text: 't', blocks: [{ type: 'header', text: { type: 'plain_text', text: 'h', emoji: true } }] },
  firing: [],
};
const resolvedOf = (n: Notification, endsAt: string): Notification => ({
  ...n,
  status: 'resolved',
  alerts: n.alerts.map((x) => ({ ...x, status: 'resolved', endsAt })),
});

describe('Slack thread state', () => {
  it('closes only when the last firing alert of the thread resolves, at its endsAt', () => {
    const firing = advance(thread, two, NOW);
    expect(firing.firing.sort()).toEqual([a!.fingerprint, b!.fingerprint].sort());
    const one = advance(firing, resolvedOf({ ...two, alerts: [a!] }, '2026-11-30T12:20:00Z'), NOW);
    expect(one).toMatchObject({ firing: [b!.fingerprint] });
    expect(one.resolvedAt).toBeUndefined();
    const all = advance(one, resolvedOf({ ...two, alerts: [b!] }, '2026-11-30T12:25:00Z'), NOW);
    expect(all).toMatchObject({ firing: [], resolvedAt: '2026-11-30T12:25:00.000Z' });
  });

  it('is idempotent: a retried delivery applies the same notification twice to the same state', () => {
    const ack: Notification = {
      ...two,
      kind: 'acknowledged',
      alerts: two.alerts.map((x) => ({
        ...x,
        acknowledgement: { by: 'alice', at: '2026-11-30T12:05:00.000Z', channel: 'slack' },
      })),
    };
    for (const n of [two, ack, { ...two, kind: 'escalation' as const }, resolvedOf(two, '2026-11-30T12:30:00Z')]) {
      const once = advance(advance(thread, two, NOW), n, NOW);
      expect(advance(once, n, NOW + 60_000)).toEqual(once);
    }
  });

  it('keeps the first acknowledgement', () => {
    const by = (name: string): Notification => ({
      ...two,
      kind: 'acknowledged',
      alerts: [{ ...a!, acknowledgement: { by: name, at: '2026-11-30T12:05:00.000Z', channel: 'slack' } }],
    });
    expect(advance(advance(thread, by('alice'), NOW), by('bob'), NOW).acknowledgedBy).toBe('alice');
  });

  it('starts a new thread when none exists or a closed one fires again; follow-ups join the stored one', () => {
    const closed = { ...thread, resolvedAt: '2026-11-30T12:30:00.000Z' };
    expect(startsNewThread(undefined, two)).toBe(true);
    expect(startsNewThread(closed, two)).toBe(true);
    expect(startsNewThread(closed, resolvedOf(two, '2026-11-30T12:30:00Z'))).toBe(false);
    expect(startsNewThread(thread, two)).toBe(false);
    expect(startsNewThread(closed, { ...two, kind: 'acknowledged' })).toBe(false);
  });

  it('renders the state under the header, escaping the name, and drops the buttons once acknowledged', () => {
    const withButton = {
      ...thread.content,
      blocks: [...thread.content.blocks, { type: 'actions', elements: [] }],
    } as unknown as SlackThread['content'];
    const acked = {
      ...thread,
      firing: ['x'],
      acknowledgedBy: '<!channel> & co',
      acknowledgedAt: '2026-11-30T12:05:00Z',
    };
    expect(stateLine(acked)).toBe(
      '🔥 *Firing* (1 alert) · 👀 Acknowledged by &lt;!channel&gt; &amp; co at 2026-11-30 12:05:00 UTC',
    );
    const out = withState(withButton, acked);
    expect(out.blocks.map((x) => x.type)).toEqual(['header', 'context']);
    expect(withState(withButton, { ...thread, firing: ['x'] }).blocks.map((x) => x.type)).toEqual([
      'header',
      'context',
      'actions',
    ]);
  });

  it('a full message keeps within 50 blocks with its state line, still ending with what is left out', () => {
    const full = renderAppMessage(manyAlertsNotification(40), { digestAbove: 50 });
    expect(full.blocks).toHaveLength(SLACK_MAX_BLOCKS);
    const out = withState(full, { ...thread, firing: ['x'] });
    expect(out.blocks).toHaveLength(SLACK_MAX_BLOCKS);
    expect(out.blocks[1]!.type).toBe('context');
    expect(out.blocks.at(-1)).toEqual(full.blocks.at(-1));
  });
});
