/**
 * Escalation of unacknowledged critical alerts in AWS: the check function (`functions/escalation.ts`),
 * the EventBridge Scheduler group its one-time schedules live in, the role Scheduler assumes to invoke
 * it, and the escalation SNS topic. The check builds the receiver's channels (its plain settings and
 * routing file), so the instances `ESCALATION_CHANNELS` names and the threads the receiver keeps get
 * the escalation as under `npm start`. {@link EscalationCheck.allowScheduling} lets the receiver create
 * and delete schedules in that group (and pass that role) and sets the `ESCALATION_*` settings it reads.
 * Helpers grant access and set the matching environment variable together, like `AlertReceiver`'s.
 * Two queues catch what would otherwise vanish: checks Scheduler could not invoke (the schedules'
 * dead-letter queue) and checks that failed after Lambda's async retries (the failed-checks queue).
 * @see https://docs.aws.amazon.com/scheduler/latest/UserGuide/setting-up.html#setting-up-execution-role
 * @see https://docs.aws.amazon.com/scheduler/latest/UserGuide/configuring-schedule-dlq.html
 */
import { Duration, Stack, Validations } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { Role } from 'aws-cdk-lib/aws-iam';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import type { LogGroup } from 'aws-cdk-lib/aws-logs';
import type { ScheduleGroup } from 'aws-cdk-lib/aws-scheduler';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { allow, allowPublish, nodeFunction, REPO_ROOT, wireSettingsSecret, wireTable } from './node-function.js';
import { onFailureQueue } from './queues.js';
import { groupSchedulesArn, scheduleTarget } from './schedule-target.js';
import { plainEnvironment, type AlertReceiver, type PlainSettings } from './receiver.js';
import { LAMBDA_ROUTING_FILE, namedSnsTopics, type RoutingShipment } from './routing.js';
import type { PrivateNetwork } from './vpc.js';

/**
 * The check reads one item, sends to its targets at once (each ≤ 20 s delivery budget), then to the threads that
 * carried the alert at once (≤ 20 s), and writes a few items.
 */
export const ESCALATION_TIMEOUT_SECONDS = 60;
export const ESCALATION_MEMORY_MIB = 256;

export interface EscalationCheckProps {
  /** Lambda entry exporting `handler`. Default: `functions/escalation.ts`. */
  entry?: string;
  /**
   * The receiver's plain settings, all passed on: `PUBLIC_URL` (the escalation message's Acknowledge
   * link), `PROMETHEUS_URL` and `ALERTMANAGER_URL` (an alert over, silenced or inhibited by then does not
   * escalate), `GRAFANA_URL` (the dashboard link), and the channels' own (`SLACK_CHANNEL`, `FEISHU_*`): the
   * check builds the receiver's channels, so a Slack or Feishu app thread gets the escalation in it.
   */
  settings?: PlainSettings;
  /**
   * The receiver's routing file (`AlertReceiver.routing`), shipped in the check's asset too (`ROUTING_FILE`):
   * its instances are the channels `channels` names, and its threads are the receiver's.
   */
  routing?: RoutingShipment;
  /** `ESCALATION_CHANNELS`: instances of the routing file the escalation goes to as well (context `escalationChannels`). */
  channels?: string[];
  /** `ESCALATION_DELAY_SECONDS` for the receiver; default: the app's (900 s). */
  delaySeconds?: number;
  /** The VPC the check joins (context `vpcId`). */
  network?: PrivateNetwork;
}

export class EscalationCheck extends Construct {
  readonly function: LambdaFunction;
  /** Escalation checks that failed after Lambda's async retries (alarm on its depth). */
  readonly failedChecks: Queue;
  /** Escalation checks Scheduler could not invoke after its retries (alarm on its depth). */
  readonly scheduleDeadLetters: Queue;
  readonly logGroup: LogGroup;
  readonly scheduleGroup: ScheduleGroup;
  /** Assumed by EventBridge Scheduler (this account only) to invoke {@link function}. */
  readonly schedulerRole: Role;
  readonly #delaySeconds?: number;
  readonly #channels: string[];
  readonly #routing?: RoutingShipment;
  #topic?: ITopic;

  constructor(scope: Construct, id: string, props: EscalationCheckProps = {}) {
    super(scope, id);
    this.#delaySeconds = props.delaySeconds;
    this.#channels = props.channels ?? [];
    this.#routing = props.routing;
    ({ function: this.function, logGroup: this.logGroup } = nodeFunction(this, 'Function', {
      entry: props.entry ?? `${REPO_ROOT}functions/escalation.ts`,
      memoryMiB: ESCALATION_MEMORY_MIB,
      timeoutSeconds: ESCALATION_TIMEOUT_SECONDS,
      environment: { ...plainEnvironment(props.settings ?? {}), ...channelEnvironment(props) },
      commandHooks: props.routing?.commandHooks,
      network: props.network,
    }));
    this.failedChecks = keepFailedChecks(this, this.function);

    const target = scheduleTarget(this, this.function, {
      queue: 'escalation checks EventBridge Scheduler could not invoke after its retries',
      role: 'EventBridge Scheduler invokes the escalation check',
    });
    this.scheduleGroup = target.scheduleGroup;
    this.scheduleDeadLetters = target.scheduleDeadLetters;
    this.schedulerRole = target.schedulerRole;
  }

  /** Allows the item actions the stores send (`TABLE_ACTIONS`) on the table and sets `TABLE_NAME` on the check. */
  useTable(table: ITable): this {
    wireTable(this.function, table);
    return this;
  }

  /** Allows `sns:Publish` on the escalation topic and sets `ESCALATION_SNS_TOPIC_ARN` on the check. */
  useTopic(topic: ITopic): this {
    allowPublish(this.function, topic);
    this.function.addEnvironment('ESCALATION_SNS_TOPIC_ARN', topic.topicArn);
    this.#topic = topic;
    return this;
  }

  /**
   * Sets `SNS_TOPIC_ARN` on the check when the routing file has an SNS instance on the stack's alert topic (its
   * configuration needs it), and allows `sns:Publish` only on the topics of the SNS instances `channels` names.
   */
  useChannelTopics(alertTopic: ITopic): this {
    if (!this.#routing) return this;
    if (this.#routing.usesDefaultTopic) this.function.addEnvironment('SNS_TOPIC_ARN', alertTopic.topicArn);
    const { arns, alertTopic: named } = namedSnsTopics(this.#routing, this.#channels);
    if (named) allowPublish(this.function, alertTopic);
    if (arns.length) allow(this.function, ['sns:Publish'], arns);
    return this;
  }

  /** Grants read on the settings secret (`ACK_SECRET`, `ESCALATION_SLACK_WEBHOOK_URL`) and sets `SETTINGS_SECRET_ARN`. */
  useSettingsSecret(secret: ISecret): this {
    wireSettingsSecret(this.function, secret);
    return this;
  }

  /**
   * Lets the receiver schedule and cancel checks: `scheduler:CreateSchedule` and `DeleteSchedule`
   * (all it sends) on this group's schedules, `iam:PassRole` on {@link schedulerRole} to Scheduler
   * only, `sns:Publish` on the escalation topic (acknowledgement follow-ups go there too); sets
   * `ESCALATION_SCHEDULE_GROUP`, `ESCALATION_FUNCTION_ARN`, `ESCALATION_ROLE_ARN`,
   * `ESCALATION_DEAD_LETTER_QUEUE_ARN`, `ESCALATION_SNS_TOPIC_ARN` and the delay.
   * @throws Error when called before {@link useTopic}
   */
  allowScheduling(receiver: AlertReceiver): this {
    if (!this.#topic) throw new Error('EscalationCheck.useTopic(topic) must come before allowScheduling(receiver)');
    const fn = receiver.function;
    const group = this.scheduleGroup.scheduleGroupName;
    const schedules = groupSchedulesArn(this, group);
    allow(fn, ['scheduler:CreateSchedule', 'scheduler:DeleteSchedule'], [schedules]);
    Validations.of(fn.role!).acknowledge({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule/${Stack.of(this).resolve(group)}/*]`,
      reason:
        "The receiver names one schedule per alert occurrence at run time (esc-<fingerprint>-<startsAt>); the wildcard covers only the schedules of this stack's own group.",
    });
    allow(fn, ['iam:PassRole'], [this.schedulerRole.roleArn], {
      StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' },
    });
    allowPublish(fn, this.#topic);
    fn.addEnvironment('ESCALATION_SCHEDULE_GROUP', group);
    fn.addEnvironment('ESCALATION_FUNCTION_ARN', this.function.functionArn);
    fn.addEnvironment('ESCALATION_ROLE_ARN', this.schedulerRole.roleArn);
    fn.addEnvironment('ESCALATION_DEAD_LETTER_QUEUE_ARN', this.scheduleDeadLetters.queueArn);
    fn.addEnvironment('ESCALATION_SNS_TOPIC_ARN', this.#topic.topicArn);
    if (this.#delaySeconds !== undefined) fn.addEnvironment('ESCALATION_DELAY_SECONDS', String(this.#delaySeconds));
    // The receiver checks the names at start-up against the same routing file, and its follow-ups reach them.
    if (this.#channels.length) fn.addEnvironment('ESCALATION_CHANNELS', this.#channels.join(','));
    return this;
  }
}

/** `ROUTING_FILE` when the routing file is shipped, `ESCALATION_CHANNELS` when instances of it are targets. */
function channelEnvironment(props: EscalationCheckProps): Record<string, string> {
  return {
    ...(props.routing && { ROUTING_FILE: LAMBDA_ROUTING_FILE }),
    ...(props.channels?.length && { ESCALATION_CHANNELS: props.channels.join(',') }),
  };
}

/**
 * The queue a check that still failed after Lambda's async retries lands in. Scheduler invokes the check
 * asynchronously: its RetryPolicy covers failed invocations only; a check that throws gets Lambda's async
 * retries (2, within an hour), then goes here, not nowhere.
 */
function keepFailedChecks(scope: Construct, fn: LambdaFunction): Queue {
  const queue = onFailureQueue(scope, fn, {
    id: 'FailedChecks',
    holds: "escalation checks that still failed after Lambda's async retries",
    retryAttempts: 2,
    maxEventAge: Duration.hours(1),
  });
  Validations.of(fn).acknowledge({
    id: 'Serverless-LambdaDLQ',
    reason:
      'Failed asynchronous invocations go to the on-failure destination (the FailedChecks queue), which records the error with the event; a dead-letter queue as well would only duplicate it.',
  });
  return queue;
}
