/**
 * `npm start` with `DATA_DIR` keeps its state across a crash: its entry runs as a child process, is
 * killed with SIGKILL (no clean-up of any kind) and started again on the same folder. Then
 * - the same alert posted again, as Alertmanager's `repeat_interval` resend, sends nothing;
 * - an acknowledgement link from a message of the first process still acknowledges;
 * - an escalation that came due while no process ran goes out once, at start.
 * Waits are bounded polls on what the processes log and the loopback servers receive.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WebhookMessage } from '../../shared/alertmanager/schema.js';
import { fixture } from '../helpers/fixtures.js';
import { startLoopback, type Loopback } from '../helpers/loopback.js';
import { startPipelineProcess, type PipelineProcess } from '../helpers/pipeline-process.js';
import { pollUntil } from '../helpers/processes.js';

const TOKEN = 'data-dir-restart-token-0123456789';
/** Short, so the escalation comes due while no process runs; the first process is killed well before. */
const ESCALATION_DELAY_SECONDS = 8;
const POLL = { deadlineMs: 60_000, intervalMs: 100 };

interface SlackBody {
  blocks: { type: string; text?: { text: string }; elements?: { url?: string }[] }[];
}

let dataDir: string;
let slack: Loopback;
let escalation: Loopback;
const processes: PipelineProcess[] = [];

function start(): Promise<PipelineProcess> {
  return startPipelineProcess({
    PORT: '0',
    HOST: '127.0.0.1',
    WEBHOOK_TOKEN: TOKEN,
    DATA_DIR: dataDir,
    SLACK_WEBHOOK_URL: `${slack.url}/services/T0/B0/main`,
    ESCALATION_SLACK_WEBHOOK_URL: `${escalation.url}/services/T0/B0/escalation`,
    ESCALATION_DELAY_SECONDS: String(ESCALATION_DELAY_SECONDS),
    PUBLIC_URL: 'https://alerts.example.com',
    ACK_SECRET: 'data-dir-restart-ack-secret-0123456789',
    HEARTBEAT_ALERTNAME: '',
  }).then((p) => {
    processes.push(p);
    return p;
  });
}

/** The fixture with a `startsAt` of now (the escalation's due time counts from the first message). */
function alertsOf(name: 'firing-queue-backlog-two-models' | 'firing-kv-cache-critical'): WebhookMessage {
  const body = fixture(name);
  const startsAt = new Date().toISOString();
  body.alerts = body.alerts.map((a) => ({ ...a, startsAt }));
  return body;
}

async function post(p: PipelineProcess, body: WebhookMessage): Promise<void> {
  const res = await fetch(`${p.url}/v1/alertmanager`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });
  expect(res.status, await res.clone().text()).toBe(200);
}

async function audit(p: PipelineProcess, fingerprint: string) {
  const res = await fetch(`${p.url}/v1/alerts/${fingerprint}`, {
    headers: { authorization: `Bearer ${TOKEN}` },
    signal: AbortSignal.timeout(5000),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as {
    record: { acknowledgement?: { by: string }; escalation?: { state: string; dueAt: string } };
    history: { type: string }[];
  };
}

const slackBodies = () => slack.requests.map((r) => JSON.parse(r.body.toString('utf8')) as SlackBody);
const context = () =>
  `slack: ${slack.requests.length}, escalation: ${escalation.requests.length}\n` +
  processes.map((p, i) => `process ${i + 1}:\n${p.out().slice(-3000)}`).join('\n');

/** The path of the Acknowledge button's link in the Slack message about `alertname` (`/v1/ack/<token>`). */
function ackPathIn(alertname: string): string | undefined {
  const body = slackBodies().find((b) => JSON.stringify(b).includes(alertname));
  const url = body?.blocks.find((b) => b.type === 'actions')?.elements?.find((e) => e.url?.includes('/v1/ack/'))?.url;
  return url && new URL(url).pathname;
}

/** Acknowledges as a browser would: the page (its form fields and cookie), then the form's POST. */
async function acknowledge(p: PipelineProcess, path: string, name: string): Promise<string> {
  const page = await fetch(`${p.url}${path}`, { signal: AbortSignal.timeout(10_000) });
  const html = await page.text();
  expect(page.status, html).toBe(200);
  const field = (n: string) => new RegExp(`name="${n}" value="([^"]*)"`).exec(html)?.[1] ?? '';
  const cookie = (page.headers.getSetCookie?.() ?? []).map((c) => c.split(';')[0]).join('; ');
  const res = await fetch(`${p.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
    body: new URLSearchParams({ nonce: field('nonce'), mac: field('mac'), name, action: 'ack' }).toString(),
    signal: AbortSignal.timeout(10_000),
  });
  const result = await res.text();
  expect(res.status, result).toBe(200);
  return result;
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'data-dir-restart-'));
  [slack, escalation] = await Promise.all([startLoopback(), startLoopback()]);
});

afterAll(async () => {
  await Promise.allSettled(processes.map((p) => p.kill()));
  await Promise.allSettled([slack?.close(), escalation?.close()]);
  await rm(dataDir, { recursive: true, force: true });
});

describe('npm start with DATA_DIR, killed with SIGKILL and started again', () => {
  it('sends no second message for the repeat, honours an earlier link, and escalates what came due once', async () => {
    const queue = alertsOf('firing-queue-backlog-two-models');
    const kvCache = alertsOf('firing-kv-cache-critical');
    const critical = kvCache.alerts[0]!.fingerprint;

    const first = await start();
    await post(first, queue);
    await post(first, kvCache);
    await pollUntil(async () => (slack.requests.length >= 2 ? true : undefined), context, POLL);
    const ackPath = ackPathIn('VLLMQueueBacklog');
    expect(ackPath, context()).toBeDefined();
    const dueAt = Date.parse((await audit(first, critical)).record.escalation!.dueAt);
    await first.kill();
    expect(Date.now(), 'the first process must be gone before the escalation is due').toBeLessThan(dueAt);

    await pollUntil(async () => (Date.now() > dueAt ? true : undefined), context, POLL);
    const second = await start();

    // Alertmanager's repeat of the first group: every alert of it already notified, nothing sent.
    await post(second, queue);
    const decisions = () =>
      second.logs.filter((l) => l.event === 'alert deduped' && l.alertname === 'VLLMQueueBacklog');
    await pollUntil(async () => (decisions().length === 2 ? true : undefined), context, POLL);
    expect(decisions().map((l) => l.decision)).toEqual(['already notified', 'already notified']);
    expect(slack.requests.length, context()).toBe(2);

    expect(second.logs.find((l) => l.event === 'escalations resumed')).toMatchObject({ scheduled: 1, overdue: 1 });

    expect(await acknowledge(second, ackPath!, 'alice')).toMatch(/acknowledged/i);
    const acked = await audit(second, queue.alerts[0]!.fingerprint);
    expect(acked.record.acknowledgement?.by).toBe('alice');

    await pollUntil(async () => (escalation.requests.length >= 1 ? true : undefined), context, POLL);
    const escalated = await audit(second, critical);
    expect(escalated.record.escalation?.state).toBe('sent');
    expect(escalated.history.map((e) => e.type)).toEqual(['notified', 'escalation scheduled', 'escalated']);
    expect(escalation.requests.length).toBe(1);
  }, 180_000);
});
