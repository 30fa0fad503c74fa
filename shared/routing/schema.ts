/**
 * The routing file, as zod schemas (the schema is the type). Each channel entry's schema is its
 * channel folder's (`shared/channels/registry.ts`); secrets are never written in the file: a webhook
 * URL or signing secret is `{ secret: NAME }`, the name of a setting that holds it (an environment
 * variable for `npm start`, a key of the settings secret in AWS).
 *
 * @example
 * channels:
 *   oncall: { type: sns, topicArn: arn:aws:sns:eu-west-1:123456789012:llm-oncall }
 *   platform-slack: { type: slack, webhookUrl: { secret: SLACK_PLATFORM_WEBHOOK_URL } }
 * routes:
 *   - matchers: ['severity="critical"', 'kind="kv_cache"']
 *     channels: [oncall]
 * default:
 *   channels: [platform-slack]
 */
import * as z from '../core/zod.js';
import { parseMatchers, MatcherSyntaxError } from '../alertmanager/matchers/index.js';
import { CHANNEL_SCHEMAS, CHANNEL_TYPES } from '../channels/registry.js';
import { MAX_MENTIONS } from '../channels/mentions.js';

/** Channel instance names: what the delivery ledger records, so keep them stable. */
export const CHANNEL_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** One channel entry: the schema of its `type`'s folder (`shared/channels/<type>/settings.ts`). */
const channelSchema = z.discriminatedUnion('type', CHANNEL_SCHEMAS, {
  message: `type must be one of ${Object.keys(CHANNEL_TYPES).join(', ')}`,
});

const matchersSchema = z.pipe(
  z.string(),
  z.transform((text, ctx) => {
    try {
      return parseMatchers(text);
    } catch (err) {
      if (!(err instanceof MatcherSyntaxError)) throw err;
      ctx.issues.push({ code: 'custom', message: err.message, input: text });
      return z.NEVER;
    }
  }),
);

/**
 * A route's or the default's channel names. An empty list would drop the alerts it receives with a
 * 200 and `notified: 0`, no trace: refused (this file has no way to drop alerts on purpose; silences
 * and inhibition in Alertmanager do that, visibly).
 */
const channelList = z.array(z.string()).check(
  z.minLength(1, {
    message:
      'names no channel: the alerts it receives would be dropped without a trace (name at least one; to drop alerts, silence or inhibit them in Alertmanager)',
  }),
);

const routeSchema = z.strictObject({
  // Each entry may hold several matchers (`'{a="1", b="2"}'`); all of them must hold.
  matchers: z.pipe(
    z._default(z.array(matchersSchema), []),
    z.transform((lists) => lists.flat()),
  ),
  channels: channelList,
  continue: z._default(z.boolean(), false),
  /** Who the route's channels @-mention for its alerts (`shared/channels/mentions.ts`; each entry goes to the channels that render it). */
  mention: z.optional(
    z
      .array(z.string())
      .check(z.maxLength(MAX_MENTIONS, { message: `must list at most ${MAX_MENTIONS} people or groups` })),
  ),
});

/** `30s`, `30m`, `1h`, `0s` (Prometheus duration, one unit) → milliseconds. */
const duration = z.pipe(
  z.string(),
  z.transform((text, ctx) => {
    const match = /^(\d+)(ms|s|m|h)$/.exec(text);
    if (!match) {
      ctx.issues.push({ code: 'custom', message: 'must be a duration such as 30m, 1h or 0s', input: text });
      return z.NEVER;
    }
    const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[match[2] as 'ms' | 's' | 'm' | 'h'];
    return Number(match[1]) * unit;
  }),
);

export const routingFileSchema = z
  .strictObject({
    channels: z.record(
      z.string().check(z.regex(CHANNEL_NAME, { message: 'channel names use letters, digits, _ . - (at most 64)' })),
      channelSchema,
    ),
    routes: z._default(z.array(routeSchema), []),
    default: z.strictObject(
      { channels: channelList },
      {
        error: (issue) =>
          issue.code === 'invalid_type'
            ? 'is required: default: { channels: [NAME, ...] } receives the alerts no route matched'
            : undefined,
      },
    ),
    flapping: z.optional(z.strictObject({ window: duration })),
  })
  .check(
    z.superRefine((file, ctx) => {
      if (Object.keys(file.channels).length === 0)
        ctx.addIssue({ code: 'custom', path: ['channels'], message: 'declares no channel' });
    }),
  );

/** The file as validated (matchers parsed, durations in ms), before secrets are looked up. */
export type RoutingFile = z.infer<typeof routingFileSchema>;
