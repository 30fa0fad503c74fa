/**
 * The deploy rehearsal: the default stack (`npx cdk deploy` with no context) created from its synthesized
 * template on moto's server mode through CloudFormation's `CreateStack` (`assembly/moto.ts`: assets
 * uploaded, bootstrap version set), then the README's first webhook through the receiver's deployed
 * asset with the environment the template gives it, resolved against what moto created, and the AWS
 * SDK pointed at moto: the settings secret read from moto's Secrets Manager, the dedupe item written to
 * the table the stack created, the alert published to the stack's topic (read back from an SQS queue
 * subscribed to it in moto).
 *
 * moto does not create the types in `MOTO_LACKS` (the settings secret is created beside the stack
 * instead; the function URL, heartbeat schedule, topic policies and alarms are checked from the template
 * by the stack, heartbeat, alarms and cfn-lint tests).
 */
import {
  DeleteMessageCommand,
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { PutSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SNSClient, SubscribeCommand } from '@aws-sdk/client-sns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { functionUrlEvent } from '../../scripts/lambda-local.js';
import { headKey } from '../../shared/store/keys.js';
import { fixture, fixtureText } from '../helpers/fixtures.js';
import { deployed, deployedFunction } from './assembly/deployed.js';
import { invokeDeployed } from './assembly/invoke.js';
import { deployToMoto, MOTO_CLIENT, MOTO_LACKS, type MotoServer, type MotoStack, startMoto } from './assembly/moto.js';

const TOKEN = 'moto-rehearsal-webhook-token-0123456789';
const STACK = 'LlmAlertPipeline';

describe('the default stack deployed on moto delivers the first webhook', () => {
  const stack = deployed('default');
  const receiver = deployedFunction('default', 'Receiver/Function');
  let moto: MotoServer;
  let created: MotoStack;

  beforeAll(async () => {
    moto = await startMoto();
    created = await deployToMoto(moto.endpoint, stack, STACK);
  }, 60_000);
  afterAll(() => moto?.close());

  it('CreateStack reaches CREATE_COMPLETE with every resource moto can create', () => {
    expect(created.status).toBe('CREATE_COMPLETE');
    // CDK's usage report (AWS::CDK::Metadata) is no service resource: moto lists it without a logical id.
    const expected = Object.entries(stack.template.Resources)
      .filter(([, r]) => r.Type !== 'AWS::CDK::Metadata' && !(MOTO_LACKS as readonly string[]).includes(r.Type))
      .map(([id]) => id);
    const listed = [...created.resources.values()].filter((r) => r.LogicalResourceId !== '');
    expect(listed.map((r) => r.LogicalResourceId).sort()).toEqual(expected.sort());
    expect(new Set(listed.map((r) => r.ResourceStatus))).toEqual(new Set(['CREATE_COMPLETE']));
    // What moto cannot create is named, so a moto that learns a type (or a stack that adds one) shows here.
    expect(new Set(created.skipped.map((id) => stack.template.Resources[id]!.Type))).toEqual(new Set(MOTO_LACKS));
  });

  it('the receiver, run from its uploaded asset against moto, answers 200, dedupes and publishes', async () => {
    const client = MOTO_CLIENT(moto.endpoint);
    // The function's environment as the template sets it, each reference resolved to what moto created.
    const physical = (v: unknown): string => {
      if (typeof v === 'string') return v;
      const id = (v as { Ref: string }).Ref;
      if (id === undefined) throw new Error(`cannot resolve ${JSON.stringify(v)}`);
      if (stack.template.Resources[id]?.Type === 'AWS::SecretsManager::Secret') return created.settingsSecretArn;
      const physicalId = created.resources.get(id)?.PhysicalResourceId;
      if (!physicalId) throw new Error(`moto created no ${id}`);
      return physicalId;
    };
    const env = Object.fromEntries(Object.entries(receiver.environment).map(([k, v]) => [k, physical(v)]));
    expect(env.SETTINGS_SECRET_ARN).toBe(created.settingsSecretArn);
    await new SecretsManagerClient(client).send(
      new PutSecretValueCommand({
        SecretId: env.SETTINGS_SECRET_ARN,
        SecretString: JSON.stringify({ WEBHOOK_TOKEN: TOKEN }),
      }),
    );
    const sqs = new SQSClient(client);
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'first-webhook' }));
    const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }));
    await new SNSClient(client).send(
      new SubscribeCommand({ TopicArn: env.SNS_TOPIC_ARN, Protocol: 'sqs', Endpoint: Attributes!.QueueArn }),
    );

    const { results } = await invokeDeployed(
      receiver,
      [functionUrlEvent(fixtureText('firing-kv-cache-critical'), { authorization: `Bearer ${TOKEN}` })],
      {
        endpoints: { dynamodb: moto.endpoint, sns: moto.endpoint, secretsManager: moto.endpoint },
        env: { ...env, AWS_ENDPOINT_URL: moto.endpoint },
      },
    );
    expect(results[0]).toMatchObject({ statusCode: 200 });

    const alert = fixture('firing-kv-cache-critical').alerts[0]!;
    const { Item } = await new DynamoDBClient(client).send(
      new GetItemCommand({ TableName: env.TABLE_NAME, Key: { pk: { S: headKey(alert) } }, ConsistentRead: true }),
    );
    expect(Item?.pk?.S).toBe(headKey(alert));
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }),
    );
    expect(Messages).toHaveLength(1);
    const notification = JSON.parse(Messages[0]!.Body!) as { TopicArn: string; Message: string };
    expect(notification.TopicArn).toBe(env.SNS_TOPIC_ARN);
    expect(notification.Message).toContain(alert.labels.alertname);
    await sqs.send(new DeleteMessageCommand({ QueueUrl, ReceiptHandle: Messages[0]!.ReceiptHandle }));
  }, 60_000);
});
