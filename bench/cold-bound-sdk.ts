/**
 * A bound, not a product: the AWS SDK alone as the receiver uses it on a cold start, bundled like the
 * receiver (`bench/floor.ts` cold phase). Init: the three clients (DynamoDB through lib-dynamodb, Secrets
 * Manager, SNS) and the settings secret read; the first invocation: the calls the first webhook of one new
 * alert makes (BatchGetItem, a conditional PutItem, an SNS Publish, UpdateItem). Beside
 * `cold-bound-raw.ts` (the same requests without the SDK), it says what the SDK costs a cold start.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import { BatchGetCommand, DynamoDBDocumentClient, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { AWS_CLIENT_DEFAULTS } from '../shared/runtime/aws-clients.js';

const secret = await new SecretsManagerClient(AWS_CLIENT_DEFAULTS).send(
  new GetSecretValueCommand({ SecretId: process.env.SETTINGS_SECRET_ARN }),
);
const doc = DynamoDBDocumentClient.from(new DynamoDBClient(AWS_CLIENT_DEFAULTS));
const sns = new SNSClient({ maxAttempts: 1 });
const TableName = process.env.TABLE_NAME!;

export async function handler(): Promise<{ statusCode: number }> {
  const pk = `bound-sdk-${process.pid}-${Date.now()}`;
  await doc.send(new BatchGetCommand({ RequestItems: { [TableName]: { Keys: [{ pk }] } } }));
  await doc.send(new PutCommand({ TableName, Item: { pk, v: 1 }, ConditionExpression: 'attribute_not_exists(pk)' }));
  await sns.send(new PublishCommand({ TopicArn: process.env.SNS_TOPIC_ARN, Subject: 'bound', Message: 'bound' }));
  await doc.send(
    new UpdateCommand({
      TableName,
      Key: { pk },
      UpdateExpression: 'SET v = :v',
      ExpressionAttributeValues: { ':v': 2 },
    }),
  );
  return { statusCode: secret.SecretString ? 200 : 500 };
}
