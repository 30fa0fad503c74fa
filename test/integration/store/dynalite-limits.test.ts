/**
 * What the isolation of bad alerts relies on: dynalite, through the real AWS SDK, refuses what
 * DynamoDB refuses (an item over 400 KB, a partition key over 2,048 bytes) with the same
 * `ValidationException`, so the tests that send such alerts fail the way production would.
 * One difference, measured here: dynalite counts a string key's characters, DynamoDB its UTF-8 bytes,
 * which is why `keyPart` counts bytes.
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html
 */
import { DynamoDBDocumentClient, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../../shared/store/local-dynamodb.js';

let db: LocalDynamoDb;
let doc: DynamoDBDocumentClient;
beforeAll(async () => {
  db = await startLocalDynamoDb('dynalite-limits');
  doc = DynamoDBDocumentClient.from(db.client);
});
afterAll(() => db.close());

const put = (pk: string, extra: Record<string, unknown> = {}) =>
  doc.send(new PutCommand({ TableName: db.tableName, Item: { pk, ...extra } }));
const refusal = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: Error) => ({ name: e.name, message: e.message }),
  );

describe('dynalite enforces DynamoDB’s limits', () => {
  it('refuses an item over 400 KB, by PutItem and by UpdateItem', async () => {
    expect(await refusal(put('big', { v: 'x'.repeat(400 * 1024) }))).toEqual({
      name: 'ValidationException',
      message: 'Item size has exceeded the maximum allowed size',
    });
    await put('grows', { v: 'x'.repeat(300 * 1024) });
    const grow = doc.send(
      new UpdateCommand({
        TableName: db.tableName,
        Key: { pk: 'grows' },
        UpdateExpression: 'SET w = :w',
        ExpressionAttributeValues: { ':w': 'y'.repeat(150 * 1024) },
      }),
    );
    expect(await refusal(grow)).toEqual({
      name: 'ValidationException',
      message: 'Item size to update has exceeded the maximum allowed size',
    });
    expect(await refusal(put('fits', { v: 'x'.repeat(399 * 1024) }))).toBeUndefined();
  });

  it('refuses a partition key over 2,048 (ASCII) bytes', async () => {
    expect(await refusal(put('k'.repeat(2048)))).toBeUndefined();
    expect(await refusal(put('k'.repeat(2049)))).toMatchObject({
      name: 'ValidationException',
      message: expect.stringMatching(/Size of hashkey has exceeded the maximum size limit of ?2048 bytes/),
    });
  });

  it('counts a key’s characters, not its bytes (DynamoDB would refuse this 3,000-byte key)', async () => {
    expect(await refusal(put('告'.repeat(1000)))).toBeUndefined();
  });
});
