/**
 * What EventBridge Scheduler's one-time schedules need to invoke a function (escalation checks, follow-up
 * tries): a schedule group, a dead-letter queue for invocations Scheduler gave up on, and a role only this
 * account's schedules may assume, which may invoke that one function (its unqualified ARN) and send to that
 * queue. Made in the caller's scope under fixed ids, so each caller's resources keep their logical ids.
 * @see https://docs.aws.amazon.com/scheduler/latest/UserGuide/setting-up.html#setting-up-execution-role
 */
import { Aws, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { ScheduleGroup } from 'aws-cdk-lib/aws-scheduler';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { failureQueue } from './queues.js';

export interface ScheduleTarget {
  scheduleGroup: ScheduleGroup;
  scheduleDeadLetters: Queue;
  schedulerRole: Role;
}

/**
 * Creates the schedule group (`Schedules`), dead-letter queue (`ScheduleDeadLetters`) and role (`SchedulerRole`)
 * for schedules invoking `fn`, in `scope`.
 * @param what the schedules' purpose, in the queue's and role's descriptions
 */
export function scheduleTarget(scope: Construct, fn: IFunction, what: { queue: string; role: string }): ScheduleTarget {
  const scheduleGroup = new ScheduleGroup(scope, 'Schedules', { removalPolicy: RemovalPolicy.DESTROY });
  const scheduleDeadLetters = failureQueue(scope, 'ScheduleDeadLetters', what.queue);
  const schedulerRole = new Role(scope, 'SchedulerRole', {
    description: what.role,
    // Confused-deputy guard: only schedules of this account may use the role.
    assumedBy: new ServicePrincipal('scheduler.amazonaws.com', {
      conditions: { StringEquals: { 'aws:SourceAccount': Aws.ACCOUNT_ID } },
    }),
  });
  // The unqualified ARN the schedules name, not also `:*` (every version and alias) as grantInvoke would.
  schedulerRole.addToPrincipalPolicy(
    new PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [fn.functionArn] }),
  );
  schedulerRole.addToPrincipalPolicy(
    new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [scheduleDeadLetters.queueArn] }),
  );
  return { scheduleGroup, scheduleDeadLetters, schedulerRole };
}

/**
 * The ARN of every schedule of `group` (`…:schedule/<group>/*`): what a function that names its schedules at run
 * time may act on.
 */
export function groupSchedulesArn(scope: Construct, group: string): string {
  return Stack.of(scope).formatArn({ service: 'scheduler', resource: 'schedule', resourceName: `${group}/*` });
}
