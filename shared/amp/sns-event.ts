/**
 * The Lambda event SNS invokes a subscribed function with (one record per invocation in practice;
 * the type allows several), validated with zod down to the fields the conversion reads.
 * @see https://docs.aws.amazon.com/lambda/latest/dg/with-sns.html
 * @see https://docs.aws.amazon.com/sns/latest/dg/sns-message-and-json-formats.html#http-notification-json
 */
import type { SNSEvent } from 'aws-lambda';
import * as z from '../core/zod.js';
import type { AmpMessage } from './convert.js';

const recordSchema = z.object({
  EventSource: z.literal('aws:sns'),
  Sns: z.object({
    MessageId: z.string().check(z.minLength(1)),
    TopicArn: z.string().check(z.minLength(1)),
    Message: z.string(),
    Timestamp: z.iso.datetime({ offset: true }),
    // SNS sends `null` when the publisher gave no subject.
    Subject: z.nullish(z.string()),
    MessageAttributes: z.nullish(z.record(z.string(), z.object({ Type: z.string(), Value: z.string() }))),
  }),
});

const eventSchema = z.object({ Records: z.array(recordSchema).check(z.minLength(1)) });

/**
 * The AMP messages of an SNS event.
 * @throws Error naming the bad field when the event is not a well-formed SNS event (then nothing in it
 *   can be delivered; the Lambda's failure destination keeps it)
 */
export function ampMessages(event: SNSEvent): AmpMessage[] {
  const parsed = eventSchema.safeParse(event);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`malformed SNS event: ${issue.path.join('.') || '(root)'}: ${issue.message}`);
  }
  return parsed.data.Records.map(({ Sns: s }) => ({
    messageId: s.MessageId,
    topicArn: s.TopicArn,
    publishedAt: s.Timestamp,
    subject: s.Subject ?? undefined,
    body: s.Message,
    attributes: Object.fromEntries(Object.entries(s.MessageAttributes ?? {}).map(([name, a]) => [name, a.Value])),
  }));
}
