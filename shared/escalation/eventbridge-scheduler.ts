/**
 * EventBridge Scheduler adapter of {@link EscalationScheduler}: one one-time schedule (`at(...)`, UTC)
 * per alert occurrence, in the stack's schedule group, invoking the escalation-check Lambda with the
 * job as input and deleting itself after it ran.
 * @see https://docs.aws.amazon.com/scheduler/latest/APIReference/API_CreateSchedule.html
 * @see https://docs.aws.amazon.com/scheduler/latest/UserGuide/schedule-types.html#one-time
 */
import { CreateScheduleCommand, DeleteScheduleCommand, type SchedulerClient } from '@aws-sdk/client-scheduler';
import type { EscalationJob, EscalationScheduler } from './scheduler.js';

/** Schedule names: 1–64 of `0-9 a-z A-Z - _ .`. @see https://docs.aws.amazon.com/scheduler/latest/APIReference/API_CreateSchedule.html */
const MAX_NAME_CHARS = 64;
/** How long Scheduler keeps retrying a failed check, seconds, and how often. */
const MAX_EVENT_AGE_SECONDS = 3600;
const MAX_RETRY_ATTEMPTS = 10;

export interface EventBridgeSchedulerSettings {
  /** `ESCALATION_SCHEDULE_GROUP`. */
  groupName: string;
  /** `ESCALATION_FUNCTION_ARN`: the escalation-check Lambda. */
  functionArn: string;
  /** `ESCALATION_ROLE_ARN`: the role Scheduler assumes to invoke it. */
  roleArn: string;
  /**
   * `ESCALATION_DEAD_LETTER_QUEUE_ARN`: where Scheduler puts a check it could not invoke after its
   * retries (the role must be allowed `sqs:SendMessage` there). Unset: such a check is dropped.
   * @see https://docs.aws.amazon.com/scheduler/latest/UserGuide/configuring-schedule-dlq.html
   */
  deadLetterQueueArn?: string;
}

/** `esc-<fingerprint>-<startsAt epoch seconds>`, other characters replaced by `_`, cut to 64. */
export function scheduleName(job: EscalationJob): string {
  const seconds = Math.floor(Date.parse(job.startsAt) / 1000);
  return `esc-${job.fingerprint.replace(/[^0-9A-Za-z_.-]/g, '_')}-${Number.isNaN(seconds) ? 0 : seconds}`.slice(
    0,
    MAX_NAME_CHARS,
  );
}

/** `at(2026-11-29T12:57:23)`: Scheduler's one-time expression, whole seconds, in UTC. */
export function atExpression(dueAtMs: number): string {
  return `at(${new Date(dueAtMs).toISOString().slice(0, 19)})`;
}

const isNamed = (err: unknown, name: string) => (err as { name?: string } | undefined)?.name === name;

export class EventBridgeScheduler implements EscalationScheduler {
  /** @param client a `SchedulerClient` in the stack's region */
  constructor(
    private readonly client: Pick<SchedulerClient, 'send'>,
    private readonly settings: EventBridgeSchedulerSettings,
  ) {}

  /** @throws the SDK's error, except `ConflictException` (the schedule exists: an HA peer made it) */
  async schedule(job: EscalationJob, dueAtMs: number): Promise<void> {
    const command = new CreateScheduleCommand({
      Name: scheduleName(job),
      GroupName: this.settings.groupName,
      ScheduleExpression: atExpression(dueAtMs),
      ScheduleExpressionTimezone: 'UTC',
      FlexibleTimeWindow: { Mode: 'OFF' },
      ActionAfterCompletion: 'DELETE',
      Target: {
        Arn: this.settings.functionArn,
        RoleArn: this.settings.roleArn,
        Input: JSON.stringify({ fingerprint: job.fingerprint, startsAt: job.startsAt }),
        RetryPolicy: { MaximumEventAgeInSeconds: MAX_EVENT_AGE_SECONDS, MaximumRetryAttempts: MAX_RETRY_ATTEMPTS },
        ...(this.settings.deadLetterQueueArn && { DeadLetterConfig: { Arn: this.settings.deadLetterQueueArn } }),
      },
      Description: `llm-alert-pipeline escalation check for alert ${job.fingerprint}`.slice(0, 512),
    });
    await this.client.send(command).catch((err: unknown) => {
      if (!isNamed(err, 'ConflictException')) throw err;
    });
  }

  /** @throws the SDK's error, except `ResourceNotFoundException` (already ran or never made) */
  async cancel(job: EscalationJob): Promise<void> {
    await this.client
      .send(new DeleteScheduleCommand({ Name: scheduleName(job), GroupName: this.settings.groupName }))
      .catch((err: unknown) => {
        if (!isNamed(err, 'ResourceNotFoundException')) throw err;
      });
  }
}
