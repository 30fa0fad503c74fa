/**
 * The whole deployment: dedupe table, alert topic, settings secret and the receiver that uses them.
 * Environment-agnostic (no account/region lookups), so `cdk synth` works offline.
 */
import { CfnOutput, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import { AttributeType, BillingMode, Table } from 'aws-cdk-lib/aws-dynamodb';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Topic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { EscalationCheck } from './escalation.js';
import { AlertReceiver, type PlainSettings } from './receiver.js';

/** Length of the generated `WEBHOOK_TOKEN`, characters (letters and digits only, so it fits a header as is). */
export const WEBHOOK_TOKEN_LENGTH = 40;

export interface LlmAlertPipelineStackProps extends StackProps {
  /** Non-secret settings for the receiver (see {@link PlainSettings}). */
  settings?: PlainSettings;
  /** Lambda entry module; default `functions/lambda.ts`. */
  entry?: string;
  /** Routing file to ship with the receiver (context `routingFile`; see the README, Routing). */
  routingFile?: string;
  /**
   * Escalation of unacknowledged critical alerts to a second SNS topic (context `escalationDelaySeconds`);
   * unset: no escalation resources.
   */
  escalation?: { delaySeconds?: number; entry?: string };
}

/**
 * Outputs: `WebhookUrl` (point Alertmanager's webhook_config here), `AlertTopicArn`,
 * `SettingsSecretArn` (fill it after deploy), `TableName`.
 */
export class LlmAlertPipelineStack extends Stack {
  readonly table: Table;
  readonly topic: Topic;
  readonly settingsSecret: Secret;
  readonly receiver: AlertReceiver;
  /** Present when `escalation` was given. */
  readonly escalationTopic?: Topic;
  readonly escalation?: EscalationCheck;

  constructor(scope: Construct, id: string, props: LlmAlertPipelineStackProps = {}) {
    super(scope, id, props);
    this.table = new Table(this, 'DedupeTable', {
      partitionKey: { name: 'pk', type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      // Epoch seconds; DynamoDB deletes expired items late, so the store also filters on read.
      timeToLiveAttribute: 'expiresAt',
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      // The delivery ledger prevents double-sends across a redeploy; never drop it with the stack.
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.topic = new Topic(this, 'AlertTopic', { displayName: 'LLM fleet alerts' });
    this.settingsSecret = new Secret(this, 'SettingsSecret', {
      description: 'llm-alert-pipeline settings (JSON): WEBHOOK_TOKEN, SLACK_WEBHOOK_URL, FEISHU_WEBHOOK_URL, FEISHU_SECRET, ACK_SECRET',
      generateSecretString: {
        secretStringTemplate: JSON.stringify({}),
        generateStringKey: 'WEBHOOK_TOKEN',
        excludePunctuation: true,
        passwordLength: WEBHOOK_TOKEN_LENGTH,
      },
    });
    this.receiver = new AlertReceiver(this, 'Receiver', { entry: props.entry, settings: props.settings, routingFile: props.routingFile })
      .useTable(this.table)
      .useTopic(this.topic)
      .useSettingsSecret(this.settingsSecret);

    if (props.escalation) {
      this.escalationTopic = new Topic(this, 'EscalationTopic', { displayName: 'LLM fleet escalations (unacknowledged critical alerts)' });
      this.escalation = new EscalationCheck(this, 'Escalation', { entry: props.escalation.entry, delaySeconds: props.escalation.delaySeconds, settings: { logLevel: props.settings?.logLevel, publicUrl: props.settings?.publicUrl, alertmanagerUrl: props.settings?.alertmanagerUrl } })
        .useTable(this.table)
        .useTopic(this.escalationTopic)
        .useSettingsSecret(this.settingsSecret)
        .allowScheduling(this.receiver);
      new CfnOutput(this, 'EscalationTopicArn', { value: this.escalationTopic.topicArn, description: 'subscribe the escalation contacts here' });
    }

    new CfnOutput(this, 'WebhookUrl', { value: this.receiver.webhookUrl, description: 'Alertmanager webhook_config url' });
    new CfnOutput(this, 'AlertTopicArn', { value: this.topic.topicArn });
    new CfnOutput(this, 'SettingsSecretArn', { value: this.settingsSecret.secretArn });
    new CfnOutput(this, 'TableName', { value: this.table.tableName });
    const secretNames = this.receiver.routing?.secretNames ?? [];
    if (secretNames.length) {
      new CfnOutput(this, 'RoutingSecretKeys', { value: secretNames.join(','), description: 'keys the routing file expects in the settings secret' });
    }
  }
}
