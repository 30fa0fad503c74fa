/**
 * `TransactWriteItems` for dynalite, which has none (it answers `UnknownOperationException`): the record
 * writes of a group's new alerts go to DynamoDB in transactions of up to 100 (`alert-record-dynamodb.ts`),
 * and the tests and the bench must run that path through the real AWS SDK, here, without DynamoDB.
 *
 * Our own code because no maintained pure-JS DynamoDB emulator offers transactions (DynamoDB Local needs
 * Java, LocalStack Docker; neither is available here). It follows the API reference, and reuses dynalite
 * for everything else: its request validation and expression parsers (`dynalite/validations`), its
 * condition evaluation (`checkConditional`) and its item operations (each action is dynalite's own
 * `GetItem`, `PutItem`, `UpdateItem` or `DeleteItem`, sent to its request listener in this process).
 *
 * - Validation (`ValidationException`, nothing written): 1 to 100 actions; each exactly one of
 *   `ConditionCheck`, `Put`, `Update`, `Delete` ("TransactItems can only contain one of Check, Put, Update or
 *   Delete"); at most one action per item ("Transaction request cannot include multiple operations on one
 *   item"); each action as dynalite validates the single-item request it stands for.
 * - Atomicity: every condition is evaluated before any write, and no other request served by this dynalite
 *   runs while a transaction does (`dynalite-gate.ts`); a write that fails after others were applied
 *   (an update's type error, the 400 KB limit) restores the items as they were.
 * - Cancellation: `TransactionCanceledException` with `CancellationReasons` in action order, `Code`
 *   `ConditionalCheckFailed` (with `Item` when `ReturnValuesOnConditionCheckFailure` is `ALL_OLD`),
 *   `ValidationError` or `None`, and the message DynamoDB sends.
 * - Capacity (`ReturnConsumedCapacity`): two write units per 1 KB of each item written, as DynamoDB
 *   charges transactional writes (the prepare and the commit).
 * - Idempotency: a `ClientRequestToken` of an applied transaction, sent again within 10 minutes with the same
 *   request, succeeds without applying it again; with another request, `IdempotentParameterMismatchException`.
 * Not emulated: `TransactionConflictException`
 * (a single write to an item a transaction holds waits here; DynamoDB rejects it), the 4 MB aggregate limit.
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html
 */
import type { Server, ServerResponse } from 'node:http';
import { crc32 } from 'node:zlib';
import { type Answer, callDynalite, type DynaliteError, db, rulesOf, validations } from './dynalite-internals.js';
import { Gate, type Listener, onEnd, readBody, replayed } from './dynalite-gate.js';
import { Tokens } from './dynalite-idempotency.js';

const TARGET = 'DynamoDB_20120810.TransactWriteItems';
/** Most actions per transaction (API reference: `TransactItems`, 1 to 100 items). */
const MAX_ACTIONS = 100;
/** dynalite's default item size limit (`maxItemSizeKb` 400), which its `PutItem` validation reads from its store. */
const STORE = { options: { maxItemSize: 400 * 1024 } };
const KINDS = ['ConditionCheck', 'Put', 'Update', 'Delete'] as const;
type Kind = (typeof KINDS)[number];
type Item = Record<string, unknown>;

/** One action, validated: the single-item request it stands for (dynalite's parsed form). */
interface Action {
  kind: Kind;
  data: Item & { TableName: string; _condition?: unknown };
  key: Item;
  returnOld: boolean;
}

/**
 * Makes `server` (a dynalite server, before any `inProcessHandler` of it is made) answer `TransactWriteItems`,
 * and puts every other request behind the same gate. Once per server.
 */
export function withTransactions(server: Server): void {
  const [listener] = server.listeners('request') as Listener[];
  if (!listener) throw new Error('dynalite server has no request listener');
  server.removeAllListeners('request');
  const gate = new Gate();
  const tokens = new Tokens();
  server.on('request', (req, res) => {
    if (req.headers['x-amz-target'] === TARGET) {
      void readBody(req).then((body) =>
        gate.enterAlone((done) => {
          // An error of the emulation itself answers 500 (the SDK retries it) and still lets the gate go on.
          const failed = (err: Error): Answer => ({ status: 500, body: { __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError', message: err.message } });
          void transact(listener, body, tokens)
            .catch(failed)
            .then((answer) => send(onEnd(res, done), answer));
        }),
      );
    } else if (gate.open) {
      gate.enter((done) => listener(req, onEnd(res, done)));
    } else {
      void readBody(req).then((body) => gate.enter((done) => listener(replayed(req, body), onEnd(res, done))));
    }
  });
}

/** Runs one `TransactWriteItems` request (its JSON body) on dynalite; the answer as DynamoDB gives it. */
async function transact(listener: Listener, body: Buffer, tokens: Tokens): Promise<Answer> {
  try {
    const request = JSON.parse(body.toString() || 'null') as Item | null;
    if (!request || typeof request !== 'object') return { status: 400, body: { __type: 'com.amazon.coral.service#SerializationException' } };
    const actions = await validate(listener, request);
    const token = tokens.check(request);
    if (token === 'repeat') return { status: 200, body: {} };
    if (token === 'mismatch')
      return {
        status: 400,
        body: { __type: 'com.amazonaws.dynamodb.v20120810#IdempotentParameterMismatchException', message: 'Request with the same client token was made with different parameters' },
      };
    const olds = await Promise.all(actions.map((a) => read(listener, a)));
    const failed = actions.map((a, i) => (db.checkConditional(a.data, olds[i]) ? a : undefined));
    if (failed.some(Boolean))
      return cancelled(
        actions.map((a, i) => (failed[i] ? { Code: 'ConditionalCheckFailed', Message: 'The conditional request failed', ...(a.returnOld && olds[i] && { Item: olds[i] }) } : { Code: 'None' })),
      );
    const units = await apply(listener, actions, olds);
    if (!Array.isArray(units)) return units;
    tokens.remember(request);
    return { status: 200, body: consumed(request, actions, units) };
  } catch (err) {
    if (err instanceof SyntaxError) return { status: 400, body: { __type: 'com.amazon.coral.service#SerializationException' } };
    const e = err as DynaliteError;
    if (e.statusCode && e.body) return { status: e.statusCode, body: e.body };
    throw err;
  }
}

/** Checks the request as DynamoDB does before running it; throws dynalite's error shapes (`ValidationException`). */
async function validate(listener: Listener, request: Item): Promise<Action[]> {
  validations.checkValidations(request, TOP_LEVEL, undefined, STORE);
  const items = request.TransactItems as Item[];
  const actions = items.map((entry, i) => action(entry, i + 1));
  const seen = new Set<string>();
  const keySchemas = new Map<string, string[]>();
  for (const a of actions) {
    const names = keySchemas.get(a.data.TableName) ?? (await keyNames(listener, a.data.TableName));
    keySchemas.set(a.data.TableName, names);
    const item = (a.kind === 'Put' ? a.data.Item : a.data.Key) as Item;
    a.key = Object.fromEntries(names.map((n) => [n, item[n]]));
    const id = JSON.stringify([a.data.TableName, names.map((n) => item[n])]);
    if (seen.has(id)) throw db.validationError('Transaction request cannot include multiple operations on one item');
    seen.add(id);
  }
  return actions;
}

const TOP_LEVEL = {
  TransactItems: { type: 'List', notNull: true, lengthGreaterThanOrEqual: 1, lengthLessThanOrEqual: MAX_ACTIONS },
  ClientRequestToken: { type: 'String', lengthGreaterThanOrEqual: 1, lengthLessThanOrEqual: 36 },
  ReturnConsumedCapacity: { type: 'String', enum: ['INDEXES', 'TOTAL', 'NONE'] },
  ReturnItemCollectionMetrics: { type: 'String', enum: ['SIZE', 'NONE'] },
};

/** One entry of `TransactItems`, validated as the single-item request it stands for. */
function action(entry: Item, position: number): Action {
  const kinds = KINDS.filter((k) => entry?.[k] != null);
  if (kinds.length !== 1) throw db.validationError('TransactItems can only contain one of Check, Put, Update or Delete');
  const kind = kinds[0]!;
  const raw = entry[kind] as Item;
  if (kind === 'ConditionCheck' && raw.ConditionExpression == null) {
    throw db.validationError(`1 validation error detected: Value null at 'transactItems.${position}.member.conditionCheck.conditionExpression' failed to satisfy constraint: Member must not be null`);
  }
  const returnOld = raw.ReturnValuesOnConditionCheckFailure === 'ALL_OLD';
  const rules = rulesOf(kind === 'ConditionCheck' ? 'Delete' : kind);
  const data = validations.checkTypes({ ...raw }, rules.types) as Action['data'];
  validations.checkValidations(data, rules.types, rules.custom, STORE);
  return { kind, data, key: {}, returnOld };
}

/** The key attribute names of `table` (dynalite's `DescribeTable`; its `ResourceNotFoundException` is thrown as is). */
async function keyNames(listener: Listener, table: string): Promise<string[]> {
  const out = await callDynalite(listener, 'DescribeTable', { TableName: table });
  if (out.status !== 200) throw { statusCode: out.status, body: out.body } satisfies DynaliteError;
  return ((out.body as { Table: { KeySchema: { AttributeName: string }[] } }).Table.KeySchema ?? []).map((k) => k.AttributeName);
}

/** The item an action targets as stored now, or `undefined`. */
async function read(listener: Listener, a: Action): Promise<Item | undefined> {
  const out = await callDynalite(listener, 'GetItem', { TableName: a.data.TableName, Key: a.key, ConsistentRead: true });
  if (out.status !== 200) throw { statusCode: out.status, body: out.body } satisfies DynaliteError;
  return (out.body as { Item?: Item }).Item;
}

/**
 * Applies the writes in order; each write's write units (dynalite's count). When one fails, the items
 * already written are put back as they were (`olds`) and the answer is the cancellation it caused.
 */
async function apply(listener: Listener, actions: Action[], olds: (Item | undefined)[]): Promise<number[] | Answer> {
  const units: number[] = [];
  for (const [i, a] of actions.entries()) {
    if (a.kind === 'ConditionCheck') {
      units.push(db.capacityUnits(olds[i], false, true));
      continue;
    }
    const out = await callDynalite(listener, `${a.kind}Item`, { ...stripParsed(a.data), ReturnConsumedCapacity: 'TOTAL' });
    if (out.status === 200) {
      units.push((out.body as { ConsumedCapacity?: { CapacityUnits?: number } }).ConsumedCapacity?.CapacityUnits ?? 1);
      continue;
    }
    await restore(listener, actions.slice(0, i), olds);
    const message = (out.body as { message?: string; Message?: string }).message ?? (out.body as { Message?: string }).Message ?? 'validation error';
    return cancelled(actions.map((_, j) => (j === i ? { Code: 'ValidationError', Message: message } : { Code: 'None' })));
  }
  return units;
}

/** Puts back the items `actions` wrote, as `olds` held them (deleted where there was none). */
async function restore(listener: Listener, actions: Action[], olds: (Item | undefined)[]): Promise<void> {
  for (const [i, a] of actions.entries()) {
    if (a.kind === 'ConditionCheck') continue;
    const old = olds[i];
    const out = old ? await callDynalite(listener, 'PutItem', { TableName: a.data.TableName, Item: old }) : await callDynalite(listener, 'DeleteItem', { TableName: a.data.TableName, Key: a.key });
    if (out.status !== 200) throw new Error(`transaction emulation: could not restore an item after a failed write (${JSON.stringify(out.body)})`);
  }
}

/** The request as the client sent it (dynalite's parsed fields, `_condition` and `_updates`, left out). */
function stripParsed(data: Item): Item {
  return Object.fromEntries(Object.entries(data).filter(([k]) => !k.startsWith('_')));
}

/** A successful answer: `ConsumedCapacity` per table when asked, transactional writes at twice the units. */
function consumed(request: Item, actions: Action[], units: number[]): Item {
  if (request.ReturnConsumedCapacity !== 'TOTAL' && request.ReturnConsumedCapacity !== 'INDEXES') return {};
  const perTable = new Map<string, number>();
  actions.forEach((a, i) => perTable.set(a.data.TableName, (perTable.get(a.data.TableName) ?? 0) + 2 * units[i]!));
  return { ConsumedCapacity: [...perTable].map(([TableName, CapacityUnits]) => ({ TableName, CapacityUnits, WriteCapacityUnits: CapacityUnits })) };
}

/** DynamoDB's cancellation: reasons in action order, their codes listed in the message. */
function cancelled(reasons: { Code: string; Message?: string; Item?: Item }[]): Answer {
  return {
    status: 400,
    body: {
      __type: 'com.amazonaws.dynamodb.v20120810#TransactionCanceledException',
      CancellationReasons: reasons,
      Message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.map((r) => r.Code).join(', ')}]`,
    },
  };
}

/** Writes an answer as dynalite writes its own (JSON, its request id and CRC32 headers). */
function send(res: ServerResponse, answer: Answer): void {
  const body = JSON.stringify(answer.body);
  res.statusCode = answer.status;
  res.setHeader('x-amzn-RequestId', `txn-emulation-${Date.now()}`);
  res.setHeader('x-amz-crc32', crc32(body));
  res.setHeader('Content-Type', 'application/x-amz-json-1.0');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}
