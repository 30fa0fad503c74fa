/**
 * A failed condition of a conditional write (`ConditionalCheckFailedException`) is an answer, not an
 * error: another writer got there first, or the item is not in the state the write expects. Every
 * store adapter asks it here, by the error's name: the SDK's class is not the same object when two
 * copies of the client are loaded (a bundle's and a test's).
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.ConditionExpressions.html
 */

/** Whether `err` is DynamoDB's "the conditional request failed". */
export function isConditionFailed(err: unknown): boolean {
  return err instanceof Error && err.name === 'ConditionalCheckFailedException';
}

/**
 * Waits for a conditional write.
 * @returns what the write returned, or `undefined` when its condition failed
 * @throws any other error of the write
 */
export async function ifConditionHolds<T>(write: Promise<T>): Promise<T | undefined> {
  try {
    return await write;
  } catch (err) {
    if (isConditionFailed(err)) return undefined;
    throw err;
  }
}
