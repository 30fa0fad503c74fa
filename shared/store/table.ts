/**
 * Creates the dedupe table where no infrastructure code does: the embedded dynalite of
 * `npm start`, a local DynamoDB endpoint, and tests. In AWS the CDK stack owns the table
 * (same key schema and TTL attribute: keep the two in step).
 */
import {
  CreateTableCommand,
  ResourceInUseException,
  UpdateTimeToLiveCommand,
  waitUntilTableExists,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';

/** The table name used when `TABLE_NAME` is unset (the embedded dynalite of `npm start`). */
export const DEFAULT_TABLE_NAME = 'llm-alert-pipeline';
/** Partition key attribute name (String). */
export const PARTITION_KEY = 'pk';
/** TTL attribute name (Number, epoch seconds). */
export const TTL_ATTRIBUTE = 'expiresAt';

/**
 * Creates the table (on-demand, TTL on `expiresAt`) if it does not exist, and waits until it is active.
 * @throws the SDK's error for anything but "table already exists"
 */
export async function ensureTable(client: DynamoDBClient, tableName: string): Promise<void> {
  try {
    await client.send(
      new CreateTableCommand({
        TableName: tableName,
        AttributeDefinitions: [{ AttributeName: PARTITION_KEY, AttributeType: 'S' }],
        KeySchema: [{ AttributeName: PARTITION_KEY, KeyType: 'HASH' }],
        BillingMode: 'PAY_PER_REQUEST',
      }),
    );
  } catch (err) {
    if (!(err instanceof ResourceInUseException || (err as Error).name === 'ResourceInUseException')) throw err;
  }
  await waitUntilTableExists({ client, maxWaitTime: 60, minDelay: 1, maxDelay: 2 }, { TableName: tableName });
  await client
    .send(
      new UpdateTimeToLiveCommand({
        TableName: tableName,
        TimeToLiveSpecification: { AttributeName: TTL_ATTRIBUTE, Enabled: true },
      }),
    )
    .catch((err: Error) => {
      // dynalite does not implement UpdateTimeToLive; reads ignore expired items anyway.
      if (err.name !== 'UnknownOperationException') throw err;
    });
}
