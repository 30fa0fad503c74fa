/**
 * Queues that only ever receive failures (dead letters, on-failure destinations): TLS-only, encrypted
 * with SQS-managed keys, kept for SQS's maximum. Nothing consumes them: an alarm on their depth calls
 * a person (`watchQueue` in alarms.ts).
 */
import { Duration, Validations } from 'aws-cdk-lib';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { allow } from './node-function.js';

/** How long a failure waits in its queue for someone to look, days (SQS's maximum). */
export const FAILURE_RETENTION_DAYS = 14;

/** A TLS-only, encrypted queue that receives failures (it is itself the end of the line). */
export function failureQueue(scope: Construct, id: string, holds: string): Queue {
  const queue = new Queue(scope, id, {
    retentionPeriod: Duration.days(FAILURE_RETENTION_DAYS),
    encryption: QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
  });
  const reason = `This queue is the dead-letter destination for ${holds}; nothing consumes it, an alarm on its depth calls a person, so it needs no dead-letter queue of its own.`;
  Validations.of(queue).acknowledge({ id: 'AwsSolutions-SQS3', reason }, { id: 'Serverless-SQSRedrivePolicy', reason });
  return queue;
}

/**
 * The on-failure destination of `fn`'s asynchronous invocations, set and granted together: a
 * {@link failureQueue} (`what.id`, holding `what.holds`) that receives each event Lambda still failed on
 * after `what.retryAttempts` retries within `what.maxEventAge`, with its error. Set by ARN with
 * `sqs:SendMessage` alone (`SqsDestination` would also grant GetQueueUrl and GetQueueAttributes).
 * @see https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-retain-records.html
 */
export function onFailureQueue(
  scope: Construct,
  fn: LambdaFunction,
  what: { id: string; holds: string; retryAttempts: number; maxEventAge: Duration },
): Queue {
  const queue = failureQueue(scope, what.id, what.holds);
  fn.configureAsyncInvoke({
    retryAttempts: what.retryAttempts,
    maxEventAge: what.maxEventAge,
    onFailure: { bind: () => ({ destination: queue.queueArn }) },
  });
  allow(fn, ['sqs:SendMessage'], [queue.queueArn]);
  return queue;
}
