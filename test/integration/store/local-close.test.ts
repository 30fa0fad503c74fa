/**
 * Closing the embedded store while requests are in flight (a background step still writing, as
 * `npm start` stops or a test ends): each request gets an answer (its own, or a 503 once closing) and
 * nothing throws out of dynalite into the process.
 */
import { UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { startLocalDynamoDb } from '../../../shared/store/local-dynamodb.js';
import { PARTITION_KEY } from '../../../shared/store/table.js';

describe('the embedded store closing under load', () => {
  it('answers or refuses every request in flight, and throws nothing into the process', async () => {
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown) => uncaught.push(err);
    process.on('uncaughtException', onUncaught);
    try {
      const db = await startLocalDynamoDb('closing-under-load');
      // Writes to one item queue behind its lock: most are still waiting when the store closes.
      const writes = Array.from({ length: 200 }, (_, i) =>
        db.client
          .send(
            new UpdateItemCommand({
              TableName: db.tableName,
              Key: { [PARTITION_KEY]: { S: 'alert#same' } },
              UpdateExpression: 'SET n = :n',
              ExpressionAttributeValues: { ':n': { N: String(i) } },
            }),
          )
          .then(
            () => 'written',
            (err: Error) => err.name,
          ),
      );
      // Close as soon as the first is answered: the others are at the store or on their way.
      await Promise.race(writes);
      await db.close();
      const outcomes = await Promise.all(writes);
      expect(outcomes).toContain('written');
      // Let any error dynalite would throw from a queued operation surface.
      for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
      expect(uncaught).toEqual([]);
    } finally {
      process.off('uncaughtException', onUncaught);
    }
  });
});
