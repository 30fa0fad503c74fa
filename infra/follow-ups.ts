/**
 * Retries of kept acknowledgement follow-ups in AWS (`shared/ack/follow-up-schedules.ts`): a follow-up a
 * platform refused for now (Slack's or PagerDuty's 429 beyond the request's budget) is kept in the table
 * and tried again by an EventBridge Scheduler one-time schedule invoking the receiver (the function that
 * owns acknowledgements) with `{followUp: id}`. Here: the schedule group, the role Scheduler assumes (it
 * may invoke the receiver only), the schedules' dead-letter queue, and on the receiver the grants and the
 * `FOLLOW_UP_*` settings, set together so they cannot drift.
 * @see https://docs.aws.amazon.com/scheduler/latest/UserGuide/setting-up.html#setting-up-execution-role
 * @see https://docs.aws.amazon.com/scheduler/latest/UserGuide/configuring-schedule-dlq.html
 */
import { Stack, Validations } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { Role } from 'aws-cdk-lib/aws-iam';
import type { ScheduleGroup } from 'aws-cdk-lib/aws-scheduler';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { FOLLOW_UP_SPACE } from '../shared/store/follow-ups.js';
import { allow } from './node-function.js';
import { groupSchedulesArn, scheduleTarget } from './schedule-target.js';
import type { AlertReceiver } from './receiver.js';

export interface FollowUpRetriesProps {
  /** The function that acknowledges alerts: it keeps follow-ups, schedules their tries and runs them. */
  receiver: AlertReceiver;
  /** The dedupe table, where the follow-ups are kept (`followup#<id>` items). */
  table: ITable;
}

export class FollowUpRetries extends Construct {
  readonly scheduleGroup: ScheduleGroup;
  /** Assumed by EventBridge Scheduler (this account only) to invoke the receiver, and nothing else. */
  readonly schedulerRole: Role;
  /** Tries of follow-ups Scheduler could not invoke after its retries (alarm on its depth). */
  readonly scheduleDeadLetters: Queue;

  constructor(scope: Construct, id: string, props: FollowUpRetriesProps) {
    super(scope, id);
    const fn = props.receiver.function;
    const target = scheduleTarget(this, fn, {
      queue: 'acknowledgement follow-up tries EventBridge Scheduler could not invoke after its retries',
      role: 'EventBridge Scheduler invokes the receiver to try a kept acknowledgement follow-up again',
    });
    this.scheduleGroup = target.scheduleGroup;
    this.scheduleDeadLetters = target.scheduleDeadLetters;
    this.schedulerRole = target.schedulerRole;
    this.#allowReceiver(props);
  }

  /**
   * Lets the receiver schedule tries (`scheduler:CreateSchedule`, all it sends, on this group's schedules;
   * `iam:PassRole` on {@link schedulerRole} to Scheduler only), drop a follow-up item once delivered or given
   * up (`dynamodb:DeleteItem` on `followup#` keys only), and sets the `FOLLOW_UP_*` settings it reads.
   */
  #allowReceiver({ receiver, table }: FollowUpRetriesProps): void {
    const fn = receiver.function;
    const group = this.scheduleGroup.scheduleGroupName;
    const schedules = groupSchedulesArn(this, group);
    allow(fn, ['scheduler:CreateSchedule'], [schedules]);
    const groupName = Stack.of(this).resolve(group);
    const wildcard = `arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule/${groupName}/*`;
    Validations.of(fn.role!).acknowledge({
      id: `AwsSolutions-IAM5[Resource::${wildcard}]`,
      reason:
        'The receiver names one schedule per follow-up try at run time (fu-<id>-<due>); ' +
        "the wildcard covers only the schedules of this stack's own follow-up group.",
    });
    allow(fn, ['iam:PassRole'], [this.schedulerRole.roleArn], {
      StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' },
    });
    allow(fn, ['dynamodb:DeleteItem'], [table.tableArn], {
      'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': `${FOLLOW_UP_SPACE}*` },
    });
    fn.addEnvironment('FOLLOW_UP_SCHEDULE_GROUP', group);
    fn.addEnvironment('FOLLOW_UP_ROLE_ARN', this.schedulerRole.roleArn);
    fn.addEnvironment('FOLLOW_UP_DEAD_LETTER_QUEUE_ARN', this.scheduleDeadLetters.queueArn);
  }
}
