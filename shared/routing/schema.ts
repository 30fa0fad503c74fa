/**
 * The routing file, as zod schemas (the schema is the type). Secrets are never written in the
 * file: a webhook URL or signing secret is `{ secret: NAME }`, the name of a setting that holds it
 * (an environment variable for `npm start`, a key of the settings secret in AWS).
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
import { MAX_DETAILED_ALERTS } from '../channels/digest.js';
import { LOCALES } from '../channels/locale.js';
import { parseMatchers, MatcherSyntaxError } from './matcher.js';

/** Channel instance names: what the delivery ledger records, so keep them stable. */
export const CHANNEL_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
/** Names of settings a secret reference may point at (environment variable syntax). */
export const SETTING_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** An SNS topic ARN, standard or FIFO. */
export const TOPIC_ARN = /^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}(\.fifo)?$/;

const secretRef = z.strictObject(
  {
    secret: z.string().regex(SETTING_NAME, { message: 'must name a setting (letters, digits and _, e.g. SLACK_ONCALL_WEBHOOK_URL)' }),
  },
  // A literal URL or secret here would put it in a file that is committed and bundled.
  { error: (issue) => (issue.code === 'invalid_type' ? 'must be { secret: SETTING_NAME }, naming the setting that holds the value, not the value itself' : undefined) },
);
export type SecretRef = z.infer<typeof secretRef>;

const common = {
  locale: z.enum(LOCALES, { message: `must be one of ${LOCALES.join(', ')}` }).optional(),
  digestAbove: z.number().int().min(1).max(MAX_DETAILED_ALERTS, { message: `must be an integer 1–${MAX_DETAILED_ALERTS}` }).optional(),
};

export const channelSchema = z.discriminatedUnion(
  'type',
  [
    z.strictObject({ type: z.literal('slack'), webhookUrl: secretRef, ...common }),
    z.strictObject({ type: z.literal('feishu'), webhookUrl: secretRef, signingSecret: secretRef.optional(), ...common }),
    z.strictObject({
      type: z.literal('sns'),
      /** Unset: the `SNS_TOPIC_ARN` setting (the CDK stack's own topic). */
      topicArn: z.string().regex(TOPIC_ARN, { message: 'must be an SNS topic ARN (arn:aws:sns:REGION:ACCOUNT:NAME)' }).optional(),
      messageStructure: z.enum(['string', 'json'], { message: 'must be string or json' }).optional(),
      ...common,
    }),
    z.strictObject({ type: z.literal('console'), ...common }),
  ],
  { message: 'type must be one of slack, feishu, sns, console' },
);
export type ChannelSpec = z.infer<typeof channelSchema>;

const matchersSchema = z.string().transform((text, ctx) => {
  try {
    return parseMatchers(text);
  } catch (err) {
    if (!(err instanceof MatcherSyntaxError)) throw err;
    ctx.addIssue({ code: 'custom', message: err.message });
    return z.NEVER;
  }
});

/**
 * A route's or the default's channel names. An empty list would drop the alerts it receives with a
 * 200 and `notified: 0`, no trace: refused (this file has no way to drop alerts on purpose; silences
 * and inhibition in Alertmanager do that, visibly).
 */
const channelList = z.array(z.string()).min(1, { message: 'names no channel: the alerts it receives would be dropped without a trace (name at least one; to drop alerts, silence or inhibit them in Alertmanager)' });

const routeSchema = z.strictObject({
  // Each entry may hold several matchers (`'{a="1", b="2"}'`); all of them must hold.
  matchers: z.array(matchersSchema).default([]).transform((lists) => lists.flat()),
  channels: channelList,
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
      { channels: channelList },
      { error: (issue) => (issue.code === 'invalid_type' ? 'is required: default: { channels: [NAME, ...] } receives the alerts no route matched' : undefined) },
    ),
    flapping: z.strictObject({ window: duration }).optional(),
  })
  .superRefine((file, ctx) => {
    if (Object.keys(file.channels).length === 0) ctx.addIssue({ code: 'custom', path: ['channels'], message: 'declares no channel' });
  });

/** The file as validated (matchers parsed, durations in ms), before secrets are looked up. */
export type RoutingFile = z.infer<typeof routingFileSchema>;
