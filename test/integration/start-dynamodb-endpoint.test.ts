/**
 * `npm start` with `AWS_ENDPOINT_URL_DYNAMODB` (DynamoDB Local, LocalStack, a dynalite server) and no AWS
 * configuration at all: such an endpoint takes any credentials and region, so none must be invented to
 * start. Here the endpoint is a dynalite server on loopback; no profile (`HOME` is empty), no keys, no
 * region, and no instance metadata (off, so that no request leaves loopback).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import { fixtureText } from '../helpers/fixtures.js';
import { startPipelineProcess, type PipelineProcess } from '../helpers/pipeline-process.js';
import { pollUntil } from '../helpers/processes.js';

let store: LocalDynamoDb;
let home: string;
let pipeline: PipelineProcess | undefined;

beforeAll(async () => {
  store = await startLocalDynamoDb('other-table');
  home = await mkdtemp(join(tmpdir(), 'endpoint-home-'));
});

afterAll(async () => {
  await pipeline?.stop();
  await store?.close();
  if (home) await rm(home, { recursive: true, force: true });
});

describe('npm start on AWS_ENDPOINT_URL_DYNAMODB without AWS credentials or region', () => {
  it('starts, creates its table there and dedupes through it', async () => {
    pipeline = await startPipelineProcess({
      PORT: '0',
      HOST: '127.0.0.1',
      HOME: home,
      AWS_ENDPOINT_URL_DYNAMODB: store.endpoint,
      AWS_EC2_METADATA_DISABLED: 'true',
    });
    const listening = pipeline.logs.find((l) => l.event === 'listening');
    expect(listening?.dynamodb, pipeline.out()).toBe('table llm-alert-pipeline at AWS_ENDPOINT_URL_DYNAMODB');
    const post = () =>
      fetch(`${pipeline!.url}/v1/alertmanager`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: fixtureText('firing-queue-backlog-two-models'),
      });
    expect((await post()).status).toBe(200);
    expect((await post()).status).toBe(200);
    const decisions = () => pipeline!.logs.filter((l) => l.event === 'alert deduped').map((l) => l.decision);
    await pollUntil(async () => (decisions().length === 4 ? true : undefined), pipeline.out, {
      deadlineMs: 30_000,
      intervalMs: 100,
    });
    expect(decisions()).toEqual(['first notification', 'first notification', 'already notified', 'already notified']);
  }, 90_000);
});
