/**
 * Escalations under `npm start` survive a restart: the due time is in the table, and a starting
 * process picks up every escalation still `scheduled`. `npm start`'s entry runs as a child process on
 * a DynamoDB that outlives it (dynalite in this test process, via `AWS_ENDPOINT_URL_DYNAMODB`). The
 * first process schedules two escalations GAP_SECONDS apart and is killed (SIGKILL, a crash) before
 * either is due. The second is started once the first is overdue: that one goes out at its start; the
 * other (normally still pending then, unless starting took longer than GAP_SECONDS) at its due time,
 * never before; each exactly once. Waits are bounded polls; the only time comparisons are orderings.
 * The timer's own behaviour for future due times is covered by `test/unit/escalation/timer-scheduler.test.ts`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import { fixture } from '../helpers/fixtures.js';
import { startLoopback, type Loopback } from '../helpers/loopback.js';
import { startPipelineProcess, type PipelineProcess } from '../helpers/pipeline-process.js';
import { pollUntil } from '../helpers/processes.js';

const TOKEN = 'e2e-restart-token-0123456789abcdef';
const TABLE = 'escalation-restart';
const DELAY_SECONDS = 30;
/**
 * Between the two alerts, seconds: room for the second process to start before the second is due
 * (starting takes about 7 s on two loaded cores); the rest of DELAY_SECONDS is the margin for killing
 * the first before the first is due.
 */
const GAP_SECONDS = 18;
const POLL = { deadlineMs: DELAY_SECONDS * 1000 + 30_000, intervalMs: 100 };
const STEP_TIMEOUT_MS = 150_000;

let db: LocalDynamoDb;
let target: Loopback;
/** When each escalation request arrived (epoch ms), by the model its alert names. */
const arrivals: { model: string; atMs: number }[] = [];
const processes: PipelineProcess[] = [];

interface Audit {
  record: { escalation?: { state: string; dueAt: string } };
  history: { type: string }[];
}

async function start(): Promise<PipelineProcess> {
  const p = await startPipelineProcess({
    PORT: '0',
    HOST: '127.0.0.1',
    WEBHOOK_TOKEN: TOKEN,
    SLACK_WEBHOOK_URL: `${target.url}/services/T0/B0/main`,
    ESCALATION_SLACK_WEBHOOK_URL: `${target.url}/services/T0/B0/escalation`,
    ESCALATION_DELAY_SECONDS: String(DELAY_SECONDS),
    // Escalation needs acknowledgement links (else nobody could stop one).
    PUBLIC_URL: 'https://alerts.example.com',
    ACK_SECRET: 'restart-ack-secret-0123456789abcdef',
    AWS_ENDPOINT_URL_DYNAMODB: db.endpoint,
    TABLE_NAME: TABLE,
    AWS_REGION: 'local',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
  });
  processes.push(p);
  return p;
}

/** A critical alert of its own model, as Alertmanager would post it. */
function critical(fingerprint: string, model: string) {
  const body = fixture('firing-kv-cache-critical');
  body.alerts = [
    {
      ...body.alerts[0]!,
      fingerprint,
      labels: { ...body.alerts[0]!.labels, model_name: model },
      startsAt: new Date().toISOString(),
    },
  ];
  body.groupKey = `{}:{alertname="VLLMKVCacheNearlyFull", model_name="${model}"}`;
  return body;
}

async function post(p: PipelineProcess, body: unknown): Promise<void> {
  const res = await fetch(`${p.url}/v1/alertmanager`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  expect(res.status, await res.clone().text()).toBe(200);
}

async function audit(p: PipelineProcess, fingerprint: string): Promise<Audit> {
  const res = await fetch(`${p.url}/v1/alerts/${fingerprint}`, {
    headers: { authorization: `Bearer ${TOKEN}` },
    signal: AbortSignal.timeout(5000),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as Audit;
}

const escalated = (model: string) => arrivals.filter((a) => a.model === model);
const context = () =>
  `arrivals: ${JSON.stringify(arrivals)}\n${processes.map((p, i) => `process ${i + 1}:\n${p.out().slice(-2500)}`).join('\n')}`;

/** Posts a critical alert and returns its due time once the process has scheduled it. */
async function scheduleOn(p: PipelineProcess, fingerprint: string, model: string): Promise<number> {
  await post(p, critical(fingerprint, model));
  const { record } = await audit(p, fingerprint);
  expect(record.escalation?.state).toBe('scheduled');
  return Date.parse(record.escalation!.dueAt);
}

beforeAll(async () => {
  db = await startLocalDynamoDb(TABLE);
  target = await startLoopback((request) => {
    if (request.path.endsWith('/escalation')) {
      arrivals.push({ model: /restart-[ab]/.exec(request.body.toString('utf8'))?.[0] ?? '?', atMs: Date.now() });
    }
    return { status: 200, body: 'ok' };
  });
}, 60_000);

afterAll(async () => {
  await Promise.allSettled(processes.map((p) => p.stop('SIGKILL')));
  await target?.close();
  await db?.close();
});

describe('escalations under npm start across a restart', () => {
  it(
    'picks them up again: the overdue one goes out at start, the pending one at its due time, each once',
    async () => {
      const first = await start();
      const dueA = await scheduleOn(first, 'a000000000000001', 'restart-a');
      await pollUntil(
        async () => (Date.now() >= dueA - (DELAY_SECONDS - GAP_SECONDS) * 1000 ? true : undefined),
        context,
        POLL,
      );
      const dueB = await scheduleOn(first, 'b000000000000002', 'restart-b');
      await first.stop('SIGKILL');
      expect(arrivals).toEqual([]);

      await pollUntil(async () => (Date.now() > dueA ? true : undefined), context, POLL);
      const spawnedAt = Date.now();
      const second = await start();
      const resumed = second.logs.find((l) => l.event === 'escalations resumed');
      expect(resumed).toMatchObject({ scheduled: 2 });
      expect(resumed!.overdue).toBeGreaterThanOrEqual(1);
      await pollUntil(async () => (escalated('restart-a').length ? true : undefined), context, POLL);
      expect(escalated('restart-a')[0]!.atMs).toBeGreaterThanOrEqual(spawnedAt);
      await pollUntil(async () => (escalated('restart-b').length ? true : undefined), context, POLL);
      expect(escalated('restart-b')[0]!.atMs).toBeGreaterThanOrEqual(dueB);

      for (const fingerprint of ['a000000000000001', 'b000000000000002']) {
        const state = await audit(second, fingerprint);
        expect(state.record.escalation?.state).toBe('sent');
        expect(state.history.map((e) => e.type)).toEqual(['notified', 'escalation scheduled', 'escalated']);
      }
      expect(arrivals.map((a) => a.model).sort()).toEqual(['restart-a', 'restart-b']);
    },
    STEP_TIMEOUT_MS,
  );
});
