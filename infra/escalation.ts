/**
 * Escalation of unacknowledged critical alerts in AWS: the check function (`functions/escalation.ts`),
 * the EventBridge Scheduler group its one-time schedules live in, the role Scheduler assumes to invoke
 * it, and the escalation SNS topic. {@link EscalationCheck.allowScheduling} lets the receiver create
 * and delete schedules in that group (and pass that role) and sets the `ESCALATION_*` settings it reads.
 * Helpers grant access and set the matching environment variable together, like `AlertReceiver`'s.
 * @see https://docs.aws.amazon.com/scheduler/latest/UserGuide/setting-up.html#setting-up-execution-role
 */
import { Aws, Duration, RemovalPolicy } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { LogGroup } from 'aws-cdk-lib/aws-logs';
import { ScheduleGroup } from 'aws-cdk-lib/aws-scheduler';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { nodeFunction, REPO_ROOT, wireSettingsSecret, wireTable } from './node-function.js';
import { plainEnvironment, type AlertReceiver, type PlainSettings } from './receiver.js';


/** The check reads one item, sends to at most two targets (each ≤ 20 s delivery budget) and writes a few items. */
export const ESCALATION_TIMEOUT_SECONDS = 60;
export const ESCALATION_MEMORY_MIB = 256;

export interface EscalationCheckProps {
  /** Lambda entry exporting `handler`. Default: `functions/escalation.ts`. */
  entry?: string;
  /** `LOG_LEVEL`, `PUBLIC_URL` (the escalation message's Acknowledge link) and `ALERTMANAGER_URL` (silenced or inhibited alerts do not escalate) are passed on. */
  settings?: Pick<PlainSettings, 'logLevel' | 'publicUrl' | 'alertmanagerUrl'>;
  /** `ESCALATION_DELAY_SECONDS` for the receiver; default: the app's (900 s). */
  delaySeconds?: number;
}

export class EscalationCheck extends Construct {
  readonly function: NodejsFunction;
  /** Escalation checks that failed after Lambda's async retries (alarm on its depth). */
  readonly failedChecks: Queue;
  readonly logGroup: LogGroup;
  readonly scheduleGroup: ScheduleGroup;
  /** Assumed by EventBridge Scheduler (this account only) to invoke {@link function}. */
  readonly schedulerRole: Role;
  readonly #delaySeconds?: number;
  #topic?: ITopic;

  constructor(scope: Construct, id: string, props: EscalationCheckProps = {}) {
    super(scope, id);
    this.#delaySeconds = props.delaySeconds;
    ({ function: this.function, logGroup: this.logGroup } = nodeFunction(this, 'Function', {
      entry: props.entry ?? `${REPO_ROOT}functions/escalation.ts`,
      memoryMiB: ESCALATION_MEMORY_MIB,
      timeoutSeconds: ESCALATION_TIMEOUT_SECONDS,
      environment: plainEnvironment(props.settings ?? {}),
    }));
    // Scheduler invokes the check asynchronously: its RetryPolicy covers failed invocations only. A
    // check that throws gets Lambda's async retries; one that still fails lands here, not nowhere.
    this.failedChecks = new Queue(this, 'FailedChecks', { retentionPeriod: Duration.days(14), encryption: QueueEncryption.SQS_MANAGED });
    this.function.configureAsyncInvoke({ retryAttempts: 2, maxEventAge: Duration.hours(1), onFailure: new SqsDestination(this.failedChecks) });
    this.scheduleGroup = new ScheduleGroup(this, 'Schedules', { removalPolicy: RemovalPolicy.DESTROY });
    this.schedulerRole = new Role(this, 'SchedulerRole', {
      description: 'EventBridge Scheduler invokes the escalation check',
      // Confused-deputy guard: only schedules of this account may use the role.
      assumedBy: new ServicePrincipal('scheduler.amazonaws.com', { conditions: { StringEquals: { 'aws:SourceAccount': Aws.ACCOUNT_ID } } }),
    });
    this.function.grantInvoke(this.schedulerRole);
  }

  /** Grants read/write on the table's items and sets `TABLE_NAME` on the check. */
  useTable(table: ITable): this {
    wireTable(this.function, table);
    return this;
  }

  /** Grants `sns:Publish` on the escalation topic and sets `ESCALATION_SNS_TOPIC_ARN` on the check. */
  useTopic(topic: ITopic): this {
    topic.grantPublish(this.function);
    this.function.addEnvironment('ESCALATION_SNS_TOPIC_ARN', topic.topicArn);
    this.#topic = topic;
    return this;
  }

  /** Grants read on the settings secret (`ACK_SECRET`, `ESCALATION_SLACK_WEBHOOK_URL`) and sets `SETTINGS_SECRET_ARN`. */
  useSettingsSecret(secret: ISecret): this {
    wireSettingsSecret(this.function, secret);
    return this;
  }

  /**
   * Lets the receiver schedule and cancel checks: `scheduler:CreateSchedule`/`UpdateSchedule`/
   * `DeleteSchedule` on this group's schedules, `iam:PassRole` on {@link schedulerRole}, `sns:Publish`
   * on the escalation topic (acknowledgement follow-ups go there too); sets `ESCALATION_SCHEDULE_GROUP`,
   * `ESCALATION_FUNCTION_ARN`, `ESCALATION_ROLE_ARN`, `ESCALATION_SNS_TOPIC_ARN` and the delay.
   * @throws Error when called before {@link useTopic}
   */
  allowScheduling(receiver: AlertReceiver): this {
    if (!this.#topic) throw new Error('EscalationCheck.useTopic(topic) must come before allowScheduling(receiver)');
    const fn = receiver.function;
    this.scheduleGroup.grants.writeSchedules(fn);
    this.scheduleGroup.grants.deleteSchedules(fn);
    this.schedulerRole.grantPassRole(fn.grantPrincipal);
    this.#topic.grantPublish(fn);
    fn.addEnvironment('ESCALATION_SCHEDULE_GROUP', this.scheduleGroup.scheduleGroupName);
    fn.addEnvironment('ESCALATION_FUNCTION_ARN', this.function.functionArn);
    fn.addEnvironment('ESCALATION_ROLE_ARN', this.schedulerRole.roleArn);
    fn.addEnvironment('ESCALATION_SNS_TOPIC_ARN', this.#topic.topicArn);
    if (this.#delaySeconds !== undefined) fn.addEnvironment('ESCALATION_DELAY_SECONDS', String(this.#delaySeconds));
    return this;
  }
}
