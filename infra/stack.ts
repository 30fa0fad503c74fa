/**
 * The whole deployment: dedupe table, alert topic, settings secret and the receiver that uses them,
 * escalation when asked for, and the ops alarms and dashboard that watch all of it.
 * Environment-agnostic (no account/region lookups), so `cdk synth` works offline.
 *
 * At rest everything is encrypted: the table and the secret with AWS keys (DynamoDB's and Secrets
 * Manager's defaults), the log groups by CloudWatch Logs, the queues with SQS-managed keys, the alert
 * and escalation topics with the AWS managed `alias/aws/sns` (publishers need no KMS permission),
 * the ops topic with its own key (see `operations.ts`). Topics and queues refuse non-TLS requests.
 */
import { CfnOutput, RemovalPolicy, Stack, Validations, type StackProps } from 'aws-cdk-lib';
import { AttributeType, BillingMode, Table } from 'aws-cdk-lib/aws-dynamodb';
import { Alias, type IAlias } from 'aws-cdk-lib/aws-kms';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Topic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import {
  watchAmp,
  watchFunction,
  watchFollowUps,
  watchFunctionUrl,
  watchHeartbeat,
  watchPipeline,
  watchQueue,
  watchTable,
  watchTopic,
} from './alarms.js';
import { ESCALATION_TIMEOUT_SECONDS, EscalationCheck } from './escalation.js';
import { FollowUpRetries } from './follow-ups.js';
import { HeartbeatCheck } from './heartbeat.js';
import { Operations } from './operations.js';
import { AMP_ALERTMANAGER_ACTIONS, AmpIngest, queryAmpWorkspace, useAmpAlertManager } from './amp.js';
import { AlertReceiver, RECEIVER_TIMEOUT_SECONDS, SECRET_SETTING_KEYS, type PlainSettings } from './receiver.js';
import type { VpcContext } from './context.js';
import { PrivateNetwork } from './vpc.js';
import { requireFunctionUrlRegion } from './regions.js';

/** Length of the generated `WEBHOOK_TOKEN`, characters (letters and digits only, so it fits a header as is). */
export const WEBHOOK_TOKEN_LENGTH = 40;

export interface LlmAlertPipelineStackProps extends StackProps {
  /** Non-secret settings for the receiver (see {@link PlainSettings}). */
  settings?: PlainSettings;
  /** Lambda entry module; default `functions/lambda.ts`. */
  entry?: string;
  /** Routing file to ship with the receiver (context `routingFile`; see docs/routing.md). */
  routingFile?: string;
  /**
   * Escalation of unacknowledged critical alerts to a second SNS topic (context `escalationDelaySeconds`);
   * unset: no escalation resources.
   */
  escalation?: {
    delaySeconds?: number;
    entry?: string;
    /** Instances of the routing file the escalation goes to as well (context `escalationChannels`). */
    channels?: string[];
  };
  /** E-mail address subscribed to the ops topic (context `alarmEmail`). */
  alarmEmail?: string;
  /**
   * Alerts from Amazon Managed Service for Prometheus through SNS (context `ampTopicArn`, or
   * `ampTopic=create` with an optional `ampWorkspaceArn`); unset: no subscription.
   */
  amp?: { topicArn?: string; workspaceArn?: string };
  /**
   * The AMP workspace the receiver queries for enrichment and charts (context `ampWorkspaceArn`): sets
   * `PROMETHEUS_URL` and `PROMETHEUS_SIGV4_REGION` and grants the query actions (`amp.ts`); not with
   * `settings.prometheusUrl`. Without `settings.alertmanagerUrl`, silences, the re-fire check and the
   * escalation check use the workspace's alert manager likewise.
   */
  ampWorkspaceArn?: string;
  /** Every function in a VPC of the user's (context `vpcId`, `vpcSubnetIds`, …; `vpc.ts`). */
  vpc?: VpcContext;
}

/**
 * Outputs: `WebhookUrl` (point Alertmanager's webhook_config here), `AlertTopicArn`, `AmpTopicArn` (with `amp`),
 * `SettingsSecretArn` (fill it after deploy), `TableName`, `OpsTopicArn` (subscribe whoever keeps
 * the pipeline running), `DashboardName`.
 */
export class LlmAlertPipelineStack extends Stack {
  readonly table: Table;
  readonly topic: Topic;
  readonly settingsSecret: Secret;
  readonly receiver: AlertReceiver;
  readonly operations: Operations;
  /** Present when `escalation` was given. */
  readonly escalationTopic?: Topic;
  readonly escalation?: EscalationCheck;
  /** Present when `amp` was given. */
  readonly amp?: AmpIngest;
  /** Present when `vpc` was given. */
  readonly network?: PrivateNetwork;
  /** Retries of acknowledgement follow-ups; present when `settings.publicUrl` is (acknowledgements need it). */
  readonly followUps?: FollowUpRetries;

  constructor(scope: Construct, id: string, props: LlmAlertPipelineStackProps = {}) {
    super(scope, id, props);
    requireFunctionUrlRegion(this);
    this.table = this.#dedupeTable();
    const snsKey = Alias.fromAliasName(this, 'SnsManagedKey', 'alias/aws/sns');
    this.topic = new Topic(this, 'AlertTopic', {
      displayName: 'LLM fleet alerts',
      masterKey: snsKey,
      enforceSSL: true,
    });
    this.settingsSecret = this.#settingsSecret();
    if (props.vpc) this.network = new PrivateNetwork(this, 'Network', props.vpc);
    this.receiver = this.#receiver(props);
    if (props.ampWorkspaceArn) this.#queryAmpWorkspace(props.ampWorkspaceArn, props.settings);
    new HeartbeatCheck(this, 'Heartbeat', { receiver: this.receiver });
    // Acknowledgements need their links (PUBLIC_URL): only then are there follow-ups to try again.
    if (props.settings?.publicUrl)
      this.followUps = new FollowUpRetries(this, 'FollowUps', { receiver: this.receiver, table: this.table });
    if (props.amp) this.amp = new AmpIngest(this, 'Amp', { receiver: this.receiver, ...props.amp });
    if (props.escalation) [this.escalationTopic, this.escalation] = this.#escalate(props, snsKey);
    this.operations = this.#watch(props.alarmEmail);
    this.#outputs();
  }

  /** The one table of every record the functions keep (`shared/store/`), kept when the stack goes. */
  #dedupeTable(): Table {
    return new Table(this, 'DedupeTable', {
      partitionKey: { name: 'pk', type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      // Epoch seconds; DynamoDB deletes expired items late, so the store also filters on read.
      timeToLiveAttribute: 'expiresAt',
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      // The delivery ledger prevents double-sends across a redeploy; never drop it with the stack.
      removalPolicy: RemovalPolicy.RETAIN,
    });
  }

  /** The webhook's function, with the table, the alert topic and the settings secret it uses. */
  #receiver(props: LlmAlertPipelineStackProps): AlertReceiver {
    return new AlertReceiver(this, 'Receiver', {
      entry: props.entry,
      settings: props.settings,
      routingFile: props.routingFile,
      network: this.network,
    })
      .useTable(this.table)
      .useTopic(this.topic)
      .useSettingsSecret(this.settingsSecret);
  }

  /**
   * The receiver queries the AMP workspace (`PROMETHEUS_URL`), and uses its alert manager unless
   * `settings.alertmanagerUrl` names another.
   * @throws Error with `settings.prometheusUrl` too (the workspace sets `PROMETHEUS_URL` itself)
   */
  #queryAmpWorkspace(workspaceArn: string, settings: PlainSettings | undefined): void {
    if (settings?.prometheusUrl)
      throw new Error('ampWorkspaceArn sets PROMETHEUS_URL itself: give it or settings.prometheusUrl, not both');
    queryAmpWorkspace(this.receiver.function, workspaceArn, this.network);
    if (!settings?.alertmanagerUrl)
      useAmpAlertManager(this.receiver.function, workspaceArn, AMP_ALERTMANAGER_ACTIONS.receiver);
  }

  /** The stack's outputs but `EscalationTopicArn` and `AmpTopicArn` (their parts add those): see the class. */
  #outputs(): void {
    new CfnOutput(this, 'WebhookUrl', {
      value: this.receiver.webhookUrl,
      description: 'Alertmanager webhook_config url',
    });
    new CfnOutput(this, 'AlertTopicArn', { value: this.topic.topicArn });
    new CfnOutput(this, 'SettingsSecretArn', { value: this.settingsSecret.secretArn });
    new CfnOutput(this, 'TableName', { value: this.table.tableName });
    new CfnOutput(this, 'OpsTopicArn', {
      value: this.operations.topic.topicArn,
      description: 'alarms about the pipeline itself: subscribe whoever keeps it running',
    });
    new CfnOutput(this, 'DashboardName', { value: this.operations.dashboard.dashboardName });
    const secretNames = this.receiver.routing?.secretNames ?? [];
    if (secretNames.length) {
      new CfnOutput(this, 'RoutingSecretKeys', {
        value: secretNames.join(','),
        description: 'keys the routing file expects in the settings secret',
      });
    }
  }

  /**
   * Escalation: its topic and check, scheduled by the receiver.
   * @throws Error without `settings.publicUrl` (the functions refuse escalation without acknowledgement links)
   */
  #escalate(props: LlmAlertPipelineStackProps, snsKey: IAlias): [Topic, EscalationCheck] {
    const escalation = props.escalation ?? {};
    // Nobody could stop an escalation without acknowledgement links: say so at synth, not at cold start.
    if (!props.settings?.publicUrl)
      throw new Error(
        'escalation needs settings.publicUrl (context publicUrl) and ACK_SECRET in the settings secret: without acknowledgement links every critical alert would escalate',
      );
    const topic = new Topic(this, 'EscalationTopic', {
      displayName: 'LLM fleet escalations (unacknowledged critical alerts)',
      masterKey: snsKey,
      enforceSSL: true,
    });
    const routing = this.receiver.routing;
    const check = new EscalationCheck(this, 'Escalation', {
      entry: escalation.entry,
      delaySeconds: escalation.delaySeconds,
      network: this.network,
      settings: props.settings,
      routing,
      channels: escalation.channels,
    })
      .useTable(this.table)
      .useTopic(topic)
      .useSettingsSecret(this.settingsSecret)
      .allowScheduling(this.receiver);
    check.useChannelTopics(this.topic);
    if (props.ampWorkspaceArn && !props.settings.alertmanagerUrl)
      useAmpAlertManager(check.function, props.ampWorkspaceArn, AMP_ALERTMANAGER_ACTIONS.check);
    new CfnOutput(this, 'EscalationTopicArn', {
      value: topic.topicArn,
      description: 'subscribe the escalation contacts here',
    });
    return [topic, check];
  }

  #settingsSecret(): Secret {
    const secret = new Secret(this, 'SettingsSecret', {
      // Every key the functions read from it (the service's and every channel type's secret settings).
      description: `llm-alert-pipeline settings (JSON): ${SECRET_SETTING_KEYS.join(', ')}`,
      generateSecretString: {
        secretStringTemplate: JSON.stringify({}),
        generateStringKey: 'WEBHOOK_TOKEN',
        excludePunctuation: true,
        passwordLength: WEBHOOK_TOKEN_LENGTH,
      },
    });
    Validations.of(secret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        "Its values are shared with systems a rotation Lambda cannot update (the WEBHOOK_TOKEN in Alertmanager's config, Slack and Feishu webhook URLs); they are rotated by hand as docs/security.md describes (ACK_SECRET with ACK_SECRET_PREVIOUS).",
    });
    return secret;
  }

  /** The ops topic, its alarms and the dashboard, over everything the stack runs. */
  #watch(alarmEmail: string | undefined): Operations {
    const ops = new Operations(this, 'Operations', { alarmEmail });
    watchFunctionUrl(ops, this.receiver.function);
    watchFunction(ops, this.receiver.function, {
      group: 'Receiver',
      timeoutSeconds: RECEIVER_TIMEOUT_SECONDS,
      throttled:
        'its Function URL answered 429, which Alertmanager does not retry: those alerts are lost (docs/deploy-aws.md, Concurrency).',
    });
    watchTable(ops, this.table);
    watchTopic(ops, 'AlertTopic', this.topic);
    watchPipeline(ops);
    watchHeartbeat(ops, { checkDeployed: true });
    if (this.amp) watchAmp(ops, this.amp);
    if (this.followUps) watchFollowUps(ops, this.followUps);
    if (this.escalation && this.escalationTopic) {
      const esc = this.escalation;
      watchFunction(ops, esc.function, {
        group: 'EscalationCheck',
        timeoutSeconds: ESCALATION_TIMEOUT_SECONDS,
        throttled:
          'Lambda retries throttled asynchronous invocations for up to an hour, then the check lands in FailedChecks.',
      });
      watchQueue(ops, esc.failedChecks, {
        group: 'FailedChecks',
        holds: "escalation checks that failed after Lambda's retries",
      });
      watchQueue(ops, esc.scheduleDeadLetters, {
        group: 'ScheduleDeadLetters',
        holds: 'escalation checks EventBridge Scheduler could not invoke',
      });
      watchTopic(ops, 'EscalationTopic', this.escalationTopic);
    }
    return ops;
  }
}
