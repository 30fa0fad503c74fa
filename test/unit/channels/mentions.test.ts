import { describe, expect, it } from 'vitest';
import {
  accepts,
  mentionProblem,
  mentionsOf,
  mentionsToShow,
  parseMention,
  slackMentionText,
} from '../../../shared/channels/mentions.js';
import { feishuMentionElement } from '../../../shared/channels/feishu/index.js';
import { withSlackMentions, renderSlack } from '../../../shared/channels/slack/index.js';
import type { Notification } from '../../../shared/render/notification.js';

const OPEN_ID = 'ou_7d8a6e6df7621556ce0d21922b676706';
const notification = (over: Partial<Notification> = {}): Notification => ({
  groupKey: 'g',
  receiver: 'r',
  status: 'firing',
  groupLabels: {},
  commonLabels: {},
  commonAnnotations: {},
  externalURL: '',
  truncatedAlerts: 0,
  alerts: [],
  ...over,
});

describe('@-mentions from configuration', () => {
  it('tells each form apart', () => {
    expect(parseMention(OPEN_ID)).toEqual({ kind: 'feishu-open-id', id: OPEN_ID });
    expect(parseMention('user_id:5d9bdxxx')).toEqual({ kind: 'feishu-user-id', id: '5d9bdxxx' });
    expect(parseMention('Zhang.San@Example.com')).toEqual({ kind: 'email', email: 'zhang.san@example.com' });
    expect(parseMention('U012AB3CD')).toEqual({ kind: 'slack-user', id: 'U012AB3CD' });
    expect(parseMention('S0614TZR7')).toEqual({ kind: 'slack-group', id: 'S0614TZR7' });
    expect(parseMention('@all')).toEqual({ kind: 'all' });
    for (const bad of ['alice', '<at id=all></at>', 'ou_x y', '@everyone', 'u012ab3cd', '<@U012AB3CD>'])
      expect(parseMention(bad)).toBeUndefined();
  });

  it('each platform renders only its own; a custom bot cannot look up an email', () => {
    expect(accepts('feishu-app', 'a@b.io')).toBe(true);
    expect(mentionProblem('feishu-bot', 'a@b.io')).toMatch(/custom bot cannot look an email up/);
    expect(accepts('slack', OPEN_ID)).toBe(false);
    expect(accepts('feishu-app', '@here')).toBe(false);
    expect(accepts('slack', '@channel')).toBe(true);
    expect(mentionsOf('slack', ['U012AB3CD', OPEN_ID], ['U012AB3CD', '@here']).map((m) => m.kind)).toEqual([
      'slack-user',
      'here',
    ]);
  });

  it('renders Feishu <at> and Slack <@…> from ids only', () => {
    const shown = mentionsOf('feishu-app', [OPEN_ID, 'user_id:abc', 'a@b.io', 'x@y.io', '@all']);
    expect(feishuMentionElement(shown, new Map([['a@b.io', 'ou_resolvedresolved']]))).toEqual({
      tag: 'markdown',
      content: `<at id=${OPEN_ID}></at> <at id=abc></at> <at id=ou_resolvedresolved></at> <at email=x@y.io></at> <at id=all></at>`,
    });
    expect(slackMentionText(mentionsOf('slack', ['U012AB3CD', 'S0614TZR7', '@here', '@all']))).toBe(
      '<@U012AB3CD> <!subteam^S0614TZR7> <!here> <!channel>',
    );
  });

  it('mentions on firing alerts and escalations; never on resolves, acknowledgements or the reduced rendering', () => {
    const own = [OPEN_ID];
    expect(mentionsToShow(notification(), 'feishu-app', own)).toHaveLength(1);
    expect(mentionsToShow(notification({ kind: 'escalation' }), 'feishu-app', own)).toHaveLength(1);
    expect(mentionsToShow(notification({ status: 'resolved' }), 'feishu-app', own)).toEqual([]);
    expect(mentionsToShow(notification({ kind: 'acknowledged' }), 'feishu-app', own)).toEqual([]);
    expect(mentionsToShow(notification({ reduced: true }), 'feishu-app', own)).toEqual([]);
    expect(mentionsToShow(notification({ mentions: ['a@b.io'] }), 'feishu-app', own)).toHaveLength(2);
  });

  it('Slack: a section under the header and the notification text start with the mentions', () => {
    const message = withSlackMentions(renderSlack(notification()), '<@U012AB3CD>');
    expect(message.blocks[1]).toMatchObject({ type: 'section', text: { text: '<@U012AB3CD>' } });
    expect(message.text.startsWith('<@U012AB3CD> ')).toBe(true);
  });
});
