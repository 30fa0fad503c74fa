/**
 * SNS's settings: a routing-file entry `{ type: sns, topicArn?, messageStructure? }`. Without
 * `topicArn` the entry publishes to the `SNS_TOPIC_ARN` setting's topic (the CDK stack's own). The
 * environment's `SNS_TOPIC_ARN` is also the channel named `sns`, and `ESCALATION_SNS_TOPIC_ARN` the
 * escalation target `escalation-sns`.
 */
import * as z from '../../core/zod.js';
import { optional } from '../../core/settings.js';
import { envSettings, ifSet } from '../env.js';
import { renderFields, type ChannelType, type InstanceBase } from '../settings.js';
import { createSnsChannel } from './index.js';

/** An SNS topic ARN, standard or FIFO. */
export const TOPIC_ARN = /^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}(\.fifo)?$/;

/** A topic ARN, as a setting or the routing file's `topicArn` takes it. */
const topicArn = () =>
  z.string().check(z.regex(TOPIC_ARN, { message: 'must be an SNS topic ARN (arn:aws:sns:REGION:ACCOUNT:NAME)' }));

const schema = z.strictObject({
  type: z.literal('sns'),
  /** Unset: the `SNS_TOPIC_ARN` setting (the CDK stack's own topic). */
  topicArn: z.optional(topicArn()),
  messageStructure: z.optional(z.enum(['string', 'json'], { message: 'must be string or json' })),
  ...renderFields,
});
export type SnsSpec = z.infer<typeof schema>;
export type SnsInstance = InstanceBase & { type: 'sns'; topicArn: string; messageStructure?: 'string' | 'json' };

const instance = (name: string, topicArn: string): SnsInstance => ({ name, type: 'sns', topicArn });

export const sns = {
  schema,
  secretNames: () => [],
  resolve(name, spec, ctx) {
    const topicArn = spec.topicArn ?? ctx.settings.SNS_TOPIC_ARN;
    if (!topicArn || !TOPIC_ARN.test(topicArn)) {
      ctx.problem('topicArn', 'not given, and SNS_TOPIC_ARN is not set to a topic ARN');
      return undefined;
    }
    return {
      name,
      type: 'sns',
      topicArn,
      messageStructure: spec.messageStructure,
      locale: spec.locale,
      digestAbove: spec.digestAbove,
    };
  },
  create: (c, deps) =>
    createSnsChannel({
      name: c.name,
      locale: c.locale,
      digestAbove: c.digestAbove,
      client: deps.snsClient(c.topicArn),
      topicArn: c.topicArn,
      messageStructure: c.messageStructure,
    }),
  env: envSettings({
    variables: { SNS_TOPIC_ARN: optional(topicArn()), ESCALATION_SNS_TOPIC_ARN: optional(topicArn()) },
    secrets: [],
    read: (v) => ({
      channels: [ifSet(v.SNS_TOPIC_ARN, (arn) => instance('sns', arn))],
      escalation: {
        ESCALATION_SNS_TOPIC_ARN: ifSet(v.ESCALATION_SNS_TOPIC_ARN, (arn) => instance('escalation-sns', arn)),
      },
    }),
  }),
} satisfies ChannelType<SnsSpec, SnsInstance>;
