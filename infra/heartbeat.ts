/**
 * The dead-man's switch check in AWS: an EventBridge Scheduler rate schedule invokes the receiver
 * function every minute with {@link HEARTBEAT_CHECK_EVENT}. The receiver runs the check itself, so
 * the missing-heartbeat alert has exactly the receiver's channels, routing file, settings secret and
 * escalation rights, with no second copy of that wiring to drift.
 * @see https://docs.aws.amazon.com/scheduler/latest/UserGuide/schedule-types.html#rate-based
 */
import { Aws } from 'aws-cdk-lib';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { CfnSchedule } from 'aws-cdk-lib/aws-scheduler';
import { Construct } from 'constructs';
import { HEARTBEAT_CHECK_EVENT } from '../shared/heartbeat/event.js';
import type { AlertReceiver } from './receiver.js';

/** How often the check runs: EventBridge Scheduler's finest rate, well inside the default 600 s timeout. */
export const HEARTBEAT_CHECK_RATE = 'rate(1 minute)';

export class HeartbeatCheck extends Construct {
  readonly schedule: CfnSchedule;
  /** Assumed by EventBridge Scheduler (this account only) to invoke the receiver. */
  readonly role: Role;

  constructor(scope: Construct, id: string, props: { receiver: AlertReceiver }) {
    super(scope, id);
    const fn = props.receiver.function;
    this.role = new Role(this, 'SchedulerRole', {
      description: 'EventBridge Scheduler invokes the receiver for the heartbeat check',
      // Confused-deputy guard: only schedules of this account may use the role.
      assumedBy: new ServicePrincipal('scheduler.amazonaws.com', {
        conditions: { StringEquals: { 'aws:SourceAccount': Aws.ACCOUNT_ID } },
      }),
    });
    // The unqualified ARN the schedule names, not also `:*` (every version and alias) as grantInvoke would.
    this.role.addToPrincipalPolicy(
      new PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [fn.functionArn] }),
    );
    this.schedule = new CfnSchedule(this, 'Schedule', {
      description: 'llm-alert-pipeline: check Alertmanager heartbeats (Watchdog)',
      scheduleExpression: HEARTBEAT_CHECK_RATE,
      flexibleTimeWindow: { mode: 'OFF' },
      target: {
        arn: fn.functionArn,
        roleArn: this.role.roleArn,
        input: JSON.stringify(HEARTBEAT_CHECK_EVENT),
        // The next run is a minute away: a late or retried one would only pile up behind it.
        retryPolicy: { maximumRetryAttempts: 0, maximumEventAgeInSeconds: 60 },
      },
    });
  }
}
