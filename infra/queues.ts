/**
 * Queues that only ever receive failures (dead letters, on-failure destinations): TLS-only, encrypted
 * with SQS-managed keys, kept for SQS's maximum. Nothing consumes them: an alarm on their depth calls
 * a person (`watchQueue` in alarms.ts).
 */
import { Duration, Validations } from 'aws-cdk-lib';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';

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
