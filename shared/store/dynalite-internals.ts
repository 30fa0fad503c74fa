/**
 * The parts of dynalite 4 that the `TransactWriteItems` emulation (`dynalite-transactions.ts`) reuses, typed
 * (dynalite publishes no types), and a call to its request listener in this process: its request
 * validation and expression parsers, its condition evaluation and capacity count, and its operations.
 * @see https://github.com/architect/dynalite
 */
import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import dbModule from 'dynalite/db/index.js';
import deleteItemRules from 'dynalite/validations/deleteItem.js';
import validationsModule from 'dynalite/validations/index.js';
import putItemRules from 'dynalite/validations/putItem.js';
import updateItemRules from 'dynalite/validations/updateItem.js';
import type { Listener } from './dynalite-gate.js';

/** An error as dynalite throws it: the HTTP status and the JSON body it answers. */
export interface DynaliteError {
  statusCode: number;
  body: unknown;
}

/** How dynalite validates one operation's request: its field types and its own checks. */
interface Rules {
  types: Record<string, unknown>;
  custom?: (data: unknown, store: unknown) => string | undefined;
}

export const db = dbModule as {
  /** The error (`ConditionalCheckFailedException`) when `data`'s parsed condition fails on `item`, else nothing. */
  checkConditional(data: unknown, item: unknown): DynaliteError | null | undefined;
  validationError(message: string): DynaliteError & Error;
  /** Capacity units of `item` (write units when `isRead` is false). */
  capacityUnits(item: unknown, isRead: boolean, consistent: boolean): number;
};

export const validations = validationsModule as {
  /** The request with its fields converted to their types; throws a `SerializationException`. */
  checkTypes(data: unknown, types: Record<string, unknown>): unknown;
  /** Throws a `ValidationException`; parses the expressions into `data._condition` / `data._updates`. */
  checkValidations(data: unknown, types: Record<string, unknown>, custom: Rules['custom'] | undefined, store: unknown): void;
};

/** dynalite's rules for the single-item request a transaction's action stands for. */
export function rulesOf(kind: 'Put' | 'Update' | 'Delete'): Rules {
  return (kind === 'Put' ? putItemRules : kind === 'Update' ? updateItemRules : deleteItemRules) as Rules;
}

/** An answer: HTTP status and JSON body. */
export interface Answer {
  status: number;
  body: unknown;
}

/**
 * Sends one DynamoDB operation to dynalite's request listener in this process (signed with placeholder
 * credentials, which dynalite accepts) and returns its answer.
 */
export function callDynalite(listener: Listener, operation: string, input: unknown): Promise<Answer> {
  return new Promise((resolve) => {
    const body = Buffer.from(JSON.stringify(input));
    const headers = {
      'x-amz-target': `DynamoDB_20120810.${operation}`,
      'content-type': 'application/x-amz-json-1.0',
      'x-amz-date': '20200101T000000Z',
      authorization: 'AWS4-HMAC-SHA256 Credential=emulation/20200101/local/dynamodb/aws4_request, SignedHeaders=host, Signature=0',
    };
    const req = Object.assign(new EventEmitter(), { method: 'POST', url: '/', headers });
    const res = {
      statusCode: 200,
      setHeader: () => {},
      end: (text?: string) => resolve({ status: res.statusCode, body: text ? JSON.parse(text) : {} }),
    };
    listener(req as unknown as IncomingMessage, res as unknown as ServerResponse);
    queueMicrotask(() => {
      req.emit('data', body);
      req.emit('end');
    });
  });
}
