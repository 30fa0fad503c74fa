/**
 * @-mentions from configuration, one mechanism for every chat platform: a routing-file `mention: [...]`
 * on a channel instance or on a route names who a message @-mentions, and each channel renders the
 * entries its platform understands (Feishu's `<at>`, Slack's `<@U…>`, `<!subteam^S…>`, `<!here>`).
 * Mentions never come from alert text: a label or annotation that looks like a mention stays text.
 *
 * Entry syntax (each is unambiguous, so a route may list channels of several platforms):
 * - Feishu: `ou_…` (an open_id), `user_id:…` (the tenant's user_id), an email (the Feishu app looks
 *   it up through the contact API; a custom bot cannot), `@all`;
 * - Slack: `U…`/`W…` (a member id), `S…` (a user group id), `@here`, `@channel`, `@all` (= `@channel`);
 * - DingTalk: `mobile:<phone number>` (the member's mobile), `dingtalk:<userId>`, `@all`;
 * - WeCom: `wecom:<userid>` (its markdown mentions user ids only, `<@userid>`).
 * @see https://open.feishu.cn/document/feishu-cards/card-json-v1-components/content-components/rich-text (`<at>`)
 * @see https://api.slack.com/reference/surfaces/formatting#mentioning-users
 * @see https://open.dingtalk.com/document/orgapp/custom-robot-access (`at`: `atMobiles`, `atUserIds`, `isAtAll`)
 * @see https://developer.work.weixin.qq.com/document/path/91770 (markdown: `<@userid>`)
 */
import * as z from '../core/zod.js';
import type { Notification } from '../render/notification.js';

/** One parsed entry. */
export type Mention =
  | { kind: 'feishu-open-id'; id: string }
  | { kind: 'feishu-user-id'; id: string }
  | { kind: 'email'; email: string }
  | { kind: 'all' }
  | { kind: 'here' }
  | { kind: 'slack-user'; id: string }
  | { kind: 'slack-group'; id: string }
  | { kind: 'mobile'; mobile: string }
  | { kind: 'dingtalk-user'; id: string }
  | { kind: 'wecom-user'; id: string };

/** Who can render which entries: a Feishu custom bot has no contact API, so no emails. */
export type MentionPlatform = 'feishu-bot' | 'feishu-app' | 'slack' | 'dingtalk' | 'wecom';

/** Most entries one instance or route lists (a message that pings more people pings nobody in particular). */
export const MAX_MENTIONS = 20;

const ACCEPTS: Record<MentionPlatform, ReadonlySet<Mention['kind']>> = {
  'feishu-bot': new Set(['feishu-open-id', 'feishu-user-id', 'all']),
  'feishu-app': new Set(['feishu-open-id', 'feishu-user-id', 'email', 'all']),
  slack: new Set(['slack-user', 'slack-group', 'all', 'here']),
  dingtalk: new Set(['mobile', 'dingtalk-user', 'all']),
  wecom: new Set(['wecom-user']),
};

const OPEN_ID = /^ou_[0-9a-zA-Z]{8,64}$/;
const USER_ID = /^user_id:([0-9A-Za-z_-]{1,64})$/;
const EMAIL = /^[^\s@<>"'`]{1,64}@[A-Za-z0-9.-]{1,190}\.[A-Za-z]{2,24}$/;
const SLACK_USER = /^[UW][A-Z0-9]{6,20}$/;
const SLACK_GROUP = /^S[A-Z0-9]{6,20}$/;
/** A phone number as DingTalk's `atMobiles` takes it: digits, an optional `+` and country code, `-` between groups. */
const MOBILE = /^mobile:(\+?[0-9][0-9-]{4,23})$/;
const DINGTALK_USER = /^dingtalk:([0-9A-Za-z_$-]{1,64})$/;
const WECOM_USER = /^wecom:([0-9A-Za-z_@.-]{1,64})$/;

/** The entry as a {@link Mention}; `undefined` when it is none of the forms above. */
export function parseMention(entry: string): Mention | undefined {
  if (entry === '@all') return { kind: 'all' };
  if (entry === '@channel') return { kind: 'all' };
  if (entry === '@here') return { kind: 'here' };
  if (OPEN_ID.test(entry)) return { kind: 'feishu-open-id', id: entry };
  const user = USER_ID.exec(entry);
  if (user) return { kind: 'feishu-user-id', id: user[1]! };
  const mobile = MOBILE.exec(entry);
  if (mobile) return { kind: 'mobile', mobile: mobile[1]! };
  const dingtalk = DINGTALK_USER.exec(entry);
  if (dingtalk) return { kind: 'dingtalk-user', id: dingtalk[1]! };
  const wecom = WECOM_USER.exec(entry);
  if (wecom) return { kind: 'wecom-user', id: wecom[1]! };
  if (SLACK_USER.test(entry)) return { kind: 'slack-user', id: entry };
  if (SLACK_GROUP.test(entry)) return { kind: 'slack-group', id: entry };
  if (EMAIL.test(entry)) return { kind: 'email', email: entry.toLowerCase() };
  return undefined;
}

/** Whether `platform` renders `entry` (`@channel`/`@here` are Slack's words; Feishu has only `@all`). */
export function accepts(platform: MentionPlatform, entry: string): boolean {
  const mention = parseMention(entry);
  if (!mention) return false;
  if (platform !== 'slack' && (entry === '@channel' || entry === '@here')) return false;
  return ACCEPTS[platform].has(mention.kind);
}

const FORMS: Record<MentionPlatform, string> = {
  'feishu-bot': 'an open_id (ou_…), user_id:<user id> or @all',
  'feishu-app': 'an open_id (ou_…), user_id:<user id>, an email or @all',
  slack: 'a member id (U…), a user group id (S…), @here or @channel',
  dingtalk: 'mobile:<phone number>, dingtalk:<userId> or @all',
  wecom: 'wecom:<userid> (WeCom markdown mentions user ids only)',
};

/** Why `platform` cannot mention `entry` (for the routing file's problem), or `undefined`. */
export function mentionProblem(platform: MentionPlatform, entry: string): string | undefined {
  if (accepts(platform, entry)) return undefined;
  const extra =
    platform === 'feishu-bot' && parseMention(entry)?.kind === 'email'
      ? ' (a custom bot cannot look an email up: use the open_id, or a feishu-app channel)'
      : '';
  return `must be ${FORMS[platform]}${extra}`;
}

/** The routing-file field `mention: [...]` of an instance of `platform`: each entry checked, no more than {@link MAX_MENTIONS}. */
export function mentionField(platform: MentionPlatform) {
  return z.optional(
    z
      .array(
        z.string().check(
          z.superRefine((entry, ctx) => {
            const problem = mentionProblem(platform, entry);
            if (problem) ctx.addIssue({ code: 'custom', message: problem });
          }),
        ),
      )
      .check(z.maxLength(MAX_MENTIONS, { message: `must list at most ${MAX_MENTIONS} people or groups` })),
  );
}

/**
 * The entries `platform` renders, in order, without repeats: the instance's own, then the route's
 * ({@link Notification.mentions}). Entries of other platforms (a route that also lists a Slack channel) are skipped.
 */
export function mentionsOf(platform: MentionPlatform, ...lists: (readonly string[] | undefined)[]): Mention[] {
  const seen = new Set<string>();
  const out: Mention[] = [];
  for (const entry of lists.flatMap((l) => l ?? [])) {
    if (seen.has(entry) || !accepts(platform, entry)) continue;
    seen.add(entry);
    out.push(parseMention(entry)!);
  }
  return out;
}

/**
 * Who a message @-mentions: the instance's entries then the route's, those `platform` renders; none on a
 * resolve, an acknowledgement, or the reduced rendering (an unknown id or a refused `@all` must not keep
 * the alert out: the reduced card goes without them).
 */
export function mentionsToShow(
  notification: Notification,
  platform: MentionPlatform,
  own: readonly string[] | undefined,
): Mention[] {
  if (notification.reduced) return [];
  const kind = notification.kind ?? 'alert';
  if (kind === 'acknowledged' || (kind === 'alert' && notification.status !== 'firing')) return [];
  return mentionsOf(platform, own, notification.mentions);
}

/** Slack's mrkdwn for the mentions (`<@U…> <!subteam^S…> <!channel>`); `''` when none. */
export function slackMentionText(mentions: Mention[]): string {
  return mentions
    .map((m) => {
      if (m.kind === 'slack-user') return `<@${m.id}>`;
      if (m.kind === 'slack-group') return `<!subteam^${m.id}>`;
      if (m.kind === 'here') return '<!here>';
      return m.kind === 'all' ? '<!channel>' : '';
    })
    .filter(Boolean)
    .join(' ');
}
