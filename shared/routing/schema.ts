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
import { z } from 'zod';
import { parseMatchers, MatcherSyntaxError } from '../alertmanager/matchers/index.js';
import { CHANNEL_SCHEMAS, CHANNEL_TYPES } from '../channels/registry.js';

/** Channel instance names: what the delivery ledger records, so keep them stable. */
export const CHANNEL_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** One channel entry: the schema of its `type`'s folder (`shared/channels/<type>/settings.ts`). */
const channelSchema = z.discriminatedUnion('type', CHANNEL_SCHEMAS, { message: `type must be one of ${Object.keys(CHANNEL_TYPES).join(', ')}` });

const matchersSchema = z.string().transform((text, ctx) => {
  try {
    return parseMatchers(text);
  } catch (err) {
    if (!(err instanceof MatcherSyntaxError)) throw err;
    ctx.addIssue({ code: 'custom', message: err.message });
    return z.NEVER;
  }
});

const routeSchema = z.strictObject({
  // Each entry may hold several matchers (`'{a="1", b="2"}'`); all of them must hold.
  matchers: z.array(matchersSchema).default([]).transform((lists) => lists.flat()),
  channels: z.array(z.string()),
  continue: z.boolean().default(false),
});

/** `30s`, `30m`, `1h`, `0s` (Prometheus duration, one unit) → milliseconds. */
const duration = z.string().transform((text, ctx) => {
  const match = /^(\d+)(ms|s|m|h)$/.exec(text);
  if (!match) {
    ctx.addIssue({ code: 'custom', message: 'must be a duration such as 30m, 1h or 0s' });
    return z.NEVER;
  }
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[match[2] as 'ms' | 's' | 'm' | 'h'];
  return Number(match[1]) * unit;
});

export const routingFileSchema = z
  .strictObject({
    channels: z.record(z.string().regex(CHANNEL_NAME, { message: 'channel names use letters, digits, _ . - (at most 64)' }), channelSchema),
    routes: z.array(routeSchema).default([]),
    default: z.strictObject(
      { channels: z.array(z.string()) },
      { error: (issue) => (issue.code === 'invalid_type' ? 'is required: default: { channels: [NAME, ...] } receives the alerts no route matched' : undefined) },
    ),
    flapping: z.strictObject({ window: duration }).optional(),
  })
  .superRefine((file, ctx) => {
    if (Object.keys(file.channels).length === 0) ctx.addIssue({ code: 'custom', path: ['channels'], message: 'declares no channel' });
  });

/** The file as validated (matchers parsed, durations in ms), before secrets are looked up. */
export type RoutingFile = z.infer<typeof routingFileSchema>;
