/**
 * The set-up the tests on dynalite share: one local DynamoDB for the file (started before its tests,
 * closed after them), and loopback stand-ins a test opens, closed after that test.
 */
import { afterAll, afterEach, beforeAll } from 'vitest';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import { startLoopback, type Loopback } from './loopback.js';

export interface DynaliteSuite {
  /** The file's dynalite (from `beforeAll` on). */
  db(): LocalDynamoDb;
  /** Starts a loopback stand-in (as `startLoopback`), closed after the test that opened it. */
  loopback(...args: Parameters<typeof startLoopback>): Promise<Loopback>;
}

/** Registers the hooks; call at the top of a test file. @param name dynalite's instance name (one per file) */
export function dynaliteSuite(name: string): DynaliteSuite {
  let db: LocalDynamoDb | undefined;
  const opened: Loopback[] = [];
  beforeAll(async () => {
    db = await startLocalDynamoDb(name);
  }, 60_000);
  afterAll(async () => {
    await db?.close();
  });
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((lb) => lb.close()));
  });
  return {
    db: () => {
      if (!db) throw new Error(`${name}: dynalite not started (use it inside a test or a hook)`);
      return db;
    },
    loopback: async (...args) => {
      const server = await startLoopback(...args);
      opened.push(server);
      return server;
    },
  };
}
