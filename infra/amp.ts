/**
 * Amazon Managed Service for Prometheus (AMP) into the pipeline: AMP's alert manager can only publish
 * to an SNS topic, so the receiver function is subscribed to one, either given (`-c ampTopicArn=…`) or
 * created here (`-c ampTopic=create`). The function reads the SNS event (`shared/amp`) and runs the same
 * pipeline as for a webhook.
 *
 * Nothing is lost quietly on the way:
 * - SNS could not invoke the function (its retries for Lambda endpoints ran out): the message goes to
 *   the subscription's dead-letter queue ({@link AmpIngest.undeliverable});
 * - the function threw (a transient failure: DynamoDB, a channel, alerts in flight; see
 *   `shared/amp/receive.ts`): Lambda retries the event twice, then sends it, with the error, to the
 *   on-failure destination ({@link AmpIngest.failedEvents}).
 * An alarm watches the depth of each (stack.ts).
 *
 * A created topic is encrypted with a key of its own: AMP publishes as the service principal
 * `aps.amazonaws.com`, which the AWS managed `alias/aws/sns` key's policy cannot admit. The topic policy
 * and the key policy let AMP publish only for workspaces of this account and region (or the one
 * workspace given as `-c ampWorkspaceArn=…`). A given topic keeps its own policies: its owner grants AMP.
 * @see https://docs.aws.amazon.com/prometheus/latest/userguide/AMP-alertmanager-receiver.html ("Giving Amazon Managed Service for Prometheus permission to send messages to your Amazon SNS topic")
 * @see https://docs.aws.amazon.com/prometheus/latest/userguide/Troubleshooting-alerting-no-policy.html
 * @see https://docs.aws.amazon.com/sns/latest/dg/sns-dead-letter-queues.html
 * @see https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-retain-records.html
 */
import { Aws, CfnOutput, CfnRule, Duration, Fn, RemovalPolicy } from 'aws-cdk-lib';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Topic, type ITopic } from 'aws-cdk-lib/aws-sns';
import { LambdaSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { InterfaceVpcEndpointAwsService } from 'aws-cdk-lib/aws-ec2';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { allow } from './node-function.js';
import type { PrivateNetwork } from './vpc.js';
import { failureQueue, onFailureQueue } from './queues.js';
import type { AlertReceiver } from './receiver.js';

/** How often Lambda retries an SNS event the function threw for (its maximum, and its default). */
export const AMP_RETRY_ATTEMPTS = 2;
/** How long Lambda keeps trying an SNS event, hours (its maximum and default, 6 h). */
export const AMP_MAX_EVENT_AGE_HOURS = 6;

export interface AmpIngestProps {
  receiver: AlertReceiver;
  /** The topic AMP publishes to (context `ampTopicArn`); unset: a topic is created. */
  topicArn?: string;
  /** With a created topic: the one AMP workspace allowed to publish (context `ampWorkspaceArn`); default: any of this account and region. */
  workspaceArn?: string;
}

export class AmpIngest extends Construct {
  readonly topic: ITopic;
  /** Set when the topic was created here. */
  readonly key?: Key;
  /** Messages SNS could not deliver to the function (the subscription's dead-letter queue). */
  readonly undeliverable: Queue;
  /** SNS events the function still failed on after Lambda's retries (the on-failure destination). */
  readonly failedEvents: Queue;

  constructor(scope: Construct, id: string, props: AmpIngestProps) {
    super(scope, id);
    if (props.topicArn) this.topic = this.#givenTopic(props.topicArn);
    else ({ topic: this.topic, key: this.key } = this.#createTopic(props.workspaceArn));

    this.undeliverable = failureQueue(
      this,
      'Undeliverable',
      'AMP messages SNS could not deliver to the receiver function',
    );
    this.topic.addSubscription(
      new LambdaSubscription(props.receiver.function, { deadLetterQueue: this.undeliverable }),
    );
    this.failedEvents = onFailureQueue(this, props.receiver.function, {
      id: 'FailedEvents',
      holds: "AMP messages the receiver still failed on after Lambda's retries",
      retryAttempts: AMP_RETRY_ATTEMPTS,
      maxEventAge: Duration.hours(AMP_MAX_EVENT_AGE_HOURS),
    });
    new CfnOutput(this, 'TopicArn', {
      key: 'AmpTopicArn',
      value: this.topic.topicArn,
      description:
        "topic_arn of the AMP alert manager definition's sns_configs (infra/amp/alertmanager-definition.yml)",
    });
  }

  /** The topic AMP publishes to, given by ARN: the deploy fails unless it is in the stack's region and account. */
  #givenTopic(topicArn: string): ITopic {
    const topic = Topic.fromTopicArn(this, 'Topic', topicArn);
    // Known at synth only when the CLI names its target (context.ts checks it then); the deploy checks it always.
    const [, , , region, account] = topicArn.split(':');
    new CfnRule(this, 'TopicHere', {
      assertions: [
        {
          assert: Fn.conditionAnd(
            Fn.conditionEquals(Aws.REGION, region!),
            Fn.conditionEquals(Aws.ACCOUNT_ID, account!),
          ),
          assertDescription:
            "ampTopicArn names a topic in another region or account: the subscription's dead-letter queue must be in the topic's account and region. Deploy there, or use -c ampTopic=create.",
        },
      ],
    });
    return topic;
  }

  #createTopic(workspaceArn: string | undefined): { topic: Topic; key: Key } {
    const key = new Key(this, 'TopicKey', {
      description: 'llm-alert-pipeline AMP topic (Amazon Managed Service for Prometheus publishes here)',
      enableKeyRotation: true,
      // Only the topic uses it; with the stack gone nothing needs to decrypt its messages.
      removalPolicy: RemovalPolicy.DESTROY,
      pendingWindow: Duration.days(7),
    });
    const topic = new Topic(this, 'Topic', {
      displayName: 'LLM fleet alerts from Amazon Managed Service for Prometheus',
      masterKey: key,
      enforceSSL: true,
    });
    // Confused-deputy guard: only AMP workspaces of this account (and region, or the one named) may publish.
    const fromOurWorkspaces = {
      StringEquals: { 'aws:SourceAccount': Aws.ACCOUNT_ID },
      ArnLike: {
        'aws:SourceArn': workspaceArn ?? `arn:${Aws.PARTITION}:aps:${Aws.REGION}:${Aws.ACCOUNT_ID}:workspace/*`,
      },
    };
    const aps = new ServicePrincipal('aps.amazonaws.com');
    key.addToResourcePolicy(
      new PolicyStatement({
        principals: [aps],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
        conditions: fromOurWorkspaces,
      }),
    );
    topic.addToResourcePolicy(
      new PolicyStatement({
        principals: [aps],
        actions: ['sns:Publish', 'sns:GetTopicAttributes'],
        resources: [topic.topicArn],
        conditions: fromOurWorkspaces,
      }),
    );
    return { topic, key };
  }
}

/**
 * What querying a workspace needs: the Prometheus-compatible query APIs the enrichment, the charts and
 * the re-fire check call (`/api/v1/query`, `/api/v1/query_range`, and the series, labels and metadata
 * APIs next to them), and nothing else (no remote write, no rules, no alert manager).
 * @see https://docs.aws.amazon.com/prometheus/latest/userguide/AMP-APIReference-Prometheus-Compatible-Apis.html
 * @see https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazonmanagedserviceforprometheus.html
 */
export const AMP_QUERY_ACTIONS = ['aps:QueryMetrics', 'aps:GetSeries', 'aps:GetLabels', 'aps:GetMetricMetadata'];

/**
 * A workspace's query endpoint and signing region, from its ARN
 * (`arn:aws:aps:eu-west-1:123456789012:workspace/ws-…`): `https://aps-workspaces.eu-west-1.amazonaws.com/workspaces/ws-…`,
 * the base URL the Prometheus client appends `/api/v1/query` to; `amazonaws.com.cn` in the China partition.
 * @see https://docs.aws.amazon.com/prometheus/latest/userguide/AMP-onboard-query-APIs.html
 */
export function ampQueryEndpoint(workspaceArn: string): { url: string; region: string } {
  const [, partition, , region, , resource] = workspaceArn.split(':');
  const id = resource!.slice('workspace/'.length);
  const domain = partition === 'aws-cn' ? 'amazonaws.com.cn' : 'amazonaws.com';
  return { url: `https://aps-workspaces.${region}.${domain}/workspaces/${id}`, region: region! };
}

/**
 * Points `fn`'s Prometheus at an AMP workspace (context `ampWorkspaceArn`), setting and granting together:
 * `PROMETHEUS_URL` is its query endpoint, `PROMETHEUS_SIGV4_REGION` its region (each query signed with the
 * function's role, service `aps`), and {@link AMP_QUERY_ACTIONS} are allowed on that workspace only. In a
 * VPC with `vpcInterfaceEndpoints=true`, an `aps-workspaces` interface endpoint joins the others.
 */
export function queryAmpWorkspace(fn: LambdaFunction, workspaceArn: string, network?: PrivateNetwork): void {
  const { url, region } = ampQueryEndpoint(workspaceArn);
  fn.addEnvironment('PROMETHEUS_URL', url);
  fn.addEnvironment('PROMETHEUS_SIGV4_REGION', region);
  allow(fn, AMP_QUERY_ACTIONS, [workspaceArn]);
  network?.addInterfaceEndpoint('AmpQuery', new InterfaceVpcEndpointAwsService('aps-workspaces').name);
}

/**
 * What the workspace's alert manager API is used for, by function: the receiver posts silences
 * ("acknowledge and silence") and lists alerts (re-fire confirmation); the escalation check lists alerts
 * (silenced or inhibited there by then: no escalation). Nothing else (no receivers, no status, no deletes).
 * @see https://docs.aws.amazon.com/prometheus/latest/userguide/AMP-APIReference-PutAlertManagerSilences.html
 * @see https://docs.aws.amazon.com/prometheus/latest/userguide/AMP-APIReference-ListAlertManagerAlerts.html
 */
export const AMP_ALERTMANAGER_ACTIONS = {
  receiver: ['aps:PutAlertManagerSilences', 'aps:ListAlertManagerAlerts'],
  check: ['aps:ListAlertManagerAlerts'],
} as const;

/**
 * Points `fn`'s Alertmanager at the workspace's alert manager (context `ampWorkspaceArn` without
 * `alertmanagerUrl`), setting and granting together: `ALERTMANAGER_URL` is the query endpoint followed by
 * `/alertmanager` (the API v2 paths follow it), `ALERTMANAGER_SIGV4_REGION` its region, and `actions`
 * are allowed on that workspace only.
 * @see https://docs.aws.amazon.com/prometheus/latest/userguide/AMP-APIReference-Prometheus-Compatible-Apis.html
 */
export function useAmpAlertManager(fn: LambdaFunction, workspaceArn: string, actions: readonly string[]): void {
  const { url, region } = ampQueryEndpoint(workspaceArn);
  fn.addEnvironment('ALERTMANAGER_URL', `${url}/alertmanager`);
  fn.addEnvironment('ALERTMANAGER_SIGV4_REGION', region);
  allow(fn, [...actions], [workspaceArn]);
}
