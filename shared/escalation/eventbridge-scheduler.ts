/**
 * EventBridge Scheduler one-time schedules (`at(...)`, UTC) that invoke a Lambda function with a JSON
 * input and delete themselves after they ran: {@link OneTimeSchedules}, used twice. Escalation
 * ({@link EventBridgeScheduler}, the adapter of {@link EscalationScheduler}): one schedule per alert
 * occurrence, invoking the escalation-check Lambda with the job as input. Kept acknowledgement follow-ups
 * (`shared/ack/follow-up-schedules.ts`): one schedule per try, invoking the receiver with `{followUp}`.
 * @see https://docs.aws.amazon.com/scheduler/latest/APIReference/API_CreateSchedule.html
 * @see https://docs.aws.amazon.com/scheduler/latest/UserGuide/schedule-types.html#one-time
 */
import { CreateScheduleCommand, DeleteScheduleCommand, type SchedulerClient } from '@aws-sdk/client-scheduler';
import type { EscalationJob, EscalationScheduler } from './scheduler.js';

/** Schedule names: 1–64 of `0-9 a-z A-Z - _ .`. @see https://docs.aws.amazon.com/scheduler/latest/APIReference/API_CreateSchedule.html */
export const MAX_NAME_CHARS = 64;
/** How long Scheduler keeps retrying an invocation it could not make, seconds, and how often. */
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

/** Where one-time schedules go and what they invoke: a group, the target function and the role Scheduler assumes. */
export interface OneTimeScheduleTarget {
  groupName: string;
  /** The Lambda function's ARN (unqualified), or a function giving it when it is known only at run time. */
  functionArn: string | (() => string);
  /** The role Scheduler assumes to invoke it. */
  roleArn: string;
  /** Where Scheduler puts an invocation it could not make after its retries. Unset: it is dropped. */
  deadLetterQueueArn?: string;
}

/** One one-time schedule: its name in the group, when it fires, the function's event. */
export interface OneTimeSchedule {
  /** 1–64 of `0-9 a-z A-Z - _ .` ({@link MAX_NAME_CHARS}). */
  name: string;
  /** Epoch milliseconds; Scheduler takes whole seconds (see {@link atExpression}). */
  dueAtMs: number;
  /** The event the function is invoked with. */
  input: unknown;
  /** At most 512 characters (cut). */
  description: string;
}

/** Creates one-time schedules invoking one function, in one group, with one role. */
export class OneTimeSchedules {
  /** @param client a `SchedulerClient` in the stack's region */
  constructor(
    private readonly client: Pick<SchedulerClient, 'send'>,
    readonly target: OneTimeScheduleTarget,
  ) {}

  /** @throws the SDK's error, except `ConflictException` (a schedule of that name exists: an HA peer made it) */
  async create(schedule: OneTimeSchedule): Promise<void> {
    const { groupName, functionArn, roleArn, deadLetterQueueArn } = this.target;
    const command = new CreateScheduleCommand({
      Name: schedule.name,
      GroupName: groupName,
      ScheduleExpression: atExpression(schedule.dueAtMs),
      ScheduleExpressionTimezone: 'UTC',
      FlexibleTimeWindow: { Mode: 'OFF' },
      ActionAfterCompletion: 'DELETE',
      Target: {
        Arn: typeof functionArn === 'string' ? functionArn : functionArn(),
        RoleArn: roleArn,
        Input: JSON.stringify(schedule.input),
        RetryPolicy: { MaximumEventAgeInSeconds: MAX_EVENT_AGE_SECONDS, MaximumRetryAttempts: MAX_RETRY_ATTEMPTS },
        ...(deadLetterQueueArn && { DeadLetterConfig: { Arn: deadLetterQueueArn } }),
      },
      Description: schedule.description.slice(0, 512),
    });
    await this.client.send(command).catch((err: unknown) => {
      if (!isNamed(err, 'ConflictException')) throw err;
    });
  }

  /** @throws the SDK's error, except `ResourceNotFoundException` (already ran or never made) */
  async delete(name: string): Promise<void> {
    await this.client
      .send(new DeleteScheduleCommand({ Name: name, GroupName: this.target.groupName }))
      .catch((err: unknown) => {
        if (!isNamed(err, 'ResourceNotFoundException')) throw err;
      });
  }
}

export class EventBridgeScheduler implements EscalationScheduler {
  /** @param schedules in the escalation group, invoking the check (`ESCALATION_*`: {@link EventBridgeSchedulerSettings}) */
  constructor(private readonly schedules: OneTimeSchedules) {}

  /** @throws the SDK's error, except `ConflictException` (the schedule exists: an HA peer made it) */
  async schedule(job: EscalationJob, dueAtMs: number): Promise<void> {
    await this.schedules.create({
      name: scheduleName(job),
      dueAtMs,
      input: { fingerprint: job.fingerprint, startsAt: job.startsAt },
      description: `llm-alert-pipeline escalation check for alert ${job.fingerprint}`,
    });
  }

  /** @throws the SDK's error, except `ResourceNotFoundException` (already ran or never made) */
  async cancel(job: EscalationJob): Promise<void> {
    await this.schedules.delete(scheduleName(job));
  }
}
