/**
 * Where the pipeline's own trouble goes: the ops SNS topic every alarm notifies (on ALARM and on OK),
 * an optional e-mail subscription, and one CloudWatch dashboard showing every alarm. What is watched
 * lives in `alarms.ts`; this construct only knows how an alarm is wired.
 *
 * The topic is encrypted with a key of its own, not the AWS managed `alias/aws/sns`: CloudWatch can
 * publish to an encrypted topic only when the key policy lets it, and an AWS managed key's policy
 * cannot be changed.
 * @see https://docs.aws.amazon.com/sns/latest/dg/sns-key-management.html#compatibility-with-aws-services
 */
import { Aws, Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import {
  Alarm,
  AlarmWidget,
  ComparisonOperator,
  Dashboard,
  TreatMissingData,
  type IMetric,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';

/** The period every alarm evaluates, minutes: one period, one datapoint, so a single bad minute's count still alarms within ~5 min. */
export const ALARM_PERIOD_MINUTES = 5;

export interface OperationsProps {
  /** Subscribes this address to the ops topic (context `alarmEmail`); AWS sends a confirmation mail first. */
  alarmEmail?: string;
}

export interface AlarmSpec {
  metric: IMetric;
  /** Alarm when the statistic is at or above this. */
  threshold: number;
  /** What it means and what to do: it is the first line of the notification. */
  description: string;
  /** Default `NOT_BREACHING`: most metrics here are counts that AWS only emits when they are non-zero. */
  treatMissingData?: TreatMissingData;
}

export class Operations extends Construct {
  readonly topic: Topic;
  readonly key: Key;
  readonly dashboard: Dashboard;
  readonly #alarms: Alarm[] = [];

  constructor(scope: Construct, id: string, props: OperationsProps = {}) {
    super(scope, id);
    this.key = new Key(this, 'TopicKey', {
      description: 'llm-alert-pipeline ops topic (CloudWatch alarms publish here)',
      enableKeyRotation: true,
      // Only the topic uses it; with the stack gone nothing needs to decrypt its messages.
      removalPolicy: RemovalPolicy.DESTROY,
      pendingWindow: Duration.days(7),
    });
    this.topic = new Topic(this, 'Topic', {
      displayName: 'llm-alert-pipeline operations',
      masterKey: this.key,
      enforceSSL: true,
    });
    this.#admitAlarms();
    if (props.alarmEmail) this.#mailTo(props.alarmEmail);
    this.dashboard = new Dashboard(this, 'Dashboard', { defaultInterval: Duration.hours(3) });
  }

  /** Confused-deputy guard: only this account's CloudWatch alarms, in this region, may publish and use the key. */
  #admitAlarms(): void {
    const fromOurAlarms = {
      StringEquals: { 'aws:SourceAccount': Aws.ACCOUNT_ID },
      ArnLike: { 'aws:SourceArn': `arn:${Aws.PARTITION}:cloudwatch:${Aws.REGION}:${Aws.ACCOUNT_ID}:alarm:*` },
    };
    const cloudwatch = new ServicePrincipal('cloudwatch.amazonaws.com');
    this.key.addToResourcePolicy(
      new PolicyStatement({
        principals: [cloudwatch],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
        conditions: fromOurAlarms,
      }),
    );
    this.topic.addToResourcePolicy(
      new PolicyStatement({
        principals: [cloudwatch],
        actions: ['sns:Publish'],
        resources: [this.topic.topicArn],
        conditions: fromOurAlarms,
      }),
    );
  }

  /** Subscribes an e-mail address to the topic (AWS sends a confirmation mail first). */
  #mailTo(address: string): void {
    const subscription = this.topic.addSubscription(new EmailSubscription(address));
    Validations.of(subscription).acknowledge({
      id: 'Serverless-SNSRedrivePolicy',
      reason:
        'A queue of alarm mails SNS could not deliver would have no reader; each alarm keeps its state and history in CloudWatch and on the dashboard, whatever happens to the mail.',
    });
  }

  /** The alarms made so far, in order. */
  get alarms(): readonly Alarm[] {
    return this.#alarms;
  }

  /**
   * Creates one alarm per spec, named `<stack>-<group><key>`, each notifying the ops topic on ALARM and on
   * OK, and shows them as one row of the dashboard.
   */
  watch(group: string, specs: Record<string, AlarmSpec>): Alarm[] {
    const alarms = Object.entries(specs).map(([key, spec]) => this.#alarm(`${group}${key}`, spec));
    this.dashboard.addWidgets(
      ...alarms.map(
        (alarm, i) => new AlarmWidget({ alarm, title: `${group} ${Object.keys(specs)[i]}`, width: 8, height: 6 }),
      ),
    );
    return alarms;
  }

  #alarm(id: string, spec: AlarmSpec): Alarm {
    const alarm = new Alarm(this, id, {
      // `<stack>-<id>` (e.g. LlmAlertPipeline-WebhookUrl4xx): the name the notification mail leads with.
      alarmName: `${Stack.of(this).stackName}-${id}`,
      metric: spec.metric,
      threshold: spec.threshold,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      datapointsToAlarm: 1,
      treatMissingData: spec.treatMissingData ?? TreatMissingData.NOT_BREACHING,
      alarmDescription: spec.description,
    });
    alarm.addAlarmAction(new SnsAction(this.topic));
    alarm.addOkAction(new SnsAction(this.topic));
    this.#alarms.push(alarm);
    return alarm;
  }
}
