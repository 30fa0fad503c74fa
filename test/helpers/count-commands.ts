/**
 * Counts the DynamoDB requests a client sends, by operation (`PutItem`, `BatchGetItem`, …), at the AWS
 * SDK's middleware (each command once, retries not counted): what a test asserts a group costs.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

/** @returns the live counts (clear it between the steps measured) */
export function countCommands(client: DynamoDBClient): Map<string, number> {
  const counts = new Map<string, number>();
  client.middlewareStack.add(
    (next, context) => (args) => {
      const name = (context.commandName ?? '?').replace(/Command$/, '');
      counts.set(name, (counts.get(name) ?? 0) + 1);
      return next(args);
    },
    { step: 'initialize', name: 'testCountCommands' },
  );
  return counts;
}
