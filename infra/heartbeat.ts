/**
 * The dead-man's switch check in AWS: an EventBridge Scheduler rate schedule invokes the receiver
 * function every minute with {@link HEARTBEAT_CHECK_EVENT}. The receiver runs the check itself, so
 * the missing-heartbeat alert has exactly the receiver's channels, routing file, settings secret and
 * escalation rights, with no second copy of that wiring to drift.
 * @see https://docs.aws.amazon.com/scheduler/latest/UserGuide/schedule-types.html#rate-based
 */
import { Duration } from 'aws-cdk-lib';
import { Schedule, ScheduleExpression, ScheduleTargetInput } from 'aws-cdk-lib/aws-scheduler';
import { LambdaInvoke } from 'aws-cdk-lib/aws-scheduler-targets';
import { Construct } from 'constructs';
import { HEARTBEAT_CHECK_EVENT } from '../shared/heartbeat/event.js';
import type { AlertReceiver } from './receiver.js';

/** How often the check runs. EventBridge Scheduler's finest rate; well inside the default 600 s timeout. */
export const HEARTBEAT_CHECK_RATE = Duration.minutes(1);

export class HeartbeatCheck extends Construct {
  readonly schedule: Schedule;

  constructor(scope: Construct, id: string, props: { receiver: AlertReceiver }) {
    super(scope, id);
    this.schedule = new Schedule(this, 'Schedule', {
      description: 'llm-alert-pipeline: check Alertmanager heartbeats (Watchdog)',
      schedule: ScheduleExpression.rate(HEARTBEAT_CHECK_RATE),
      // The next run is a minute away: a late or retried one only piles up behind it.
      target: new LambdaInvoke(props.receiver.function, { input: ScheduleTargetInput.fromObject(HEARTBEAT_CHECK_EVENT), retryAttempts: 0, maxEventAge: Duration.minutes(1) }),
    });
  }
}
