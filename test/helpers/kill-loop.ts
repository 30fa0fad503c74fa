/**
 * The kill loop: `npm start`'s entry against loopback Slack, Feishu and SNS stand-ins and a dynalite
 * that outlives it, SIGKILLed at random points while it delivers, again and again, with
 * Alertmanager-style retries re-posting every alert not yet answered 200 (into processes that are
 * killed too), then one process that lives until every alert is answered. Counts, per channel and
 * alert, the messages that arrived: a missing one is a lost alert, an extra one a duplicate.
 *
 * Used by `bench/kill-loop.ts` (≥ 50 kills, the figure in docs/delivery.md) and a short e2e test.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startLocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import { fixture } from './fixtures.js';
import { startPipelineProcess, type PipelineProcess } from './pipeline-process.js';
import { pollUntil } from './processes.js';
import { startSnsServer } from './sns-server.js';

export interface KillLoopOptions {
  kills: number;
  /** Longest reply delay of the Slack and Feishu stand-ins, milliseconds (so kills land mid-request). */
  maxReplyDelayMs?: number;
  /** Progress lines (e.g. `console.error`). */
  progress?: (line: string) => void;
}

export interface KillLoopResult {
  kills: number;
  alerts: number;
  /** Messages per channel, by alert number. */
  received: Record<Channel, number[]>;
  duplicates: Record<Channel, number>;
  missing: Record<Channel, number>;
  /** Posts answered 200, 5xx, or cut by a kill. */
  posts: { ok: number; retry: number; killed: number };
}

export type Channel = 'slack' | 'feishu' | 'sns';
const LEASE_MS = 1000;
const SETTLE_ROUNDS = 60;
/** After the chosen channel request, the kill waits up to this long more, milliseconds. */
const KILL_JITTER_MS = 60;
/** A kill whose chosen channel request never comes happens anyway after this long, milliseconds. */
const KILL_FALLBACK_MS = 10_000;

/** A webhook stand-in answering `reply` after a random delay; counts alert markers in bodies. */
async function delayedServer(
  reply: string,
  maxDelayMs: number,
  count: (body: string) => void,
  seen: { requests: number },
): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.requests += 1;
      count(body);
      setTimeout(
        () => res.writeHead(200, { 'content-type': 'application/json' }).end(reply),
        Math.random() * maxDelayMs,
      );
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}

/** Alert `n`'s webhook: its own fingerprint and a summary marker the channels' text carries. */
function webhook(n: number): string {
  const message = fixture('firing-kv-cache-critical');
  const alert = message.alerts[0]!;
  alert.fingerprint = `kill${String(n).padStart(4, '0')}`;
  alert.annotations = { summary: `kill-loop alert #${n}#` };
  message.commonAnnotations = {};
  return JSON.stringify(message);
}

const markers = (body: string) => [...body.matchAll(/kill-loop alert #(\d+)#/g)].map((m) => Number(m[1]));

export async function runKillLoop(options: KillLoopOptions): Promise<KillLoopResult> {
  const log = options.progress ?? (() => {});
  const alerts = options.kills;
  const received: Record<Channel, number[]> = {
    slack: Array(alerts).fill(0),
    feishu: Array(alerts).fill(0),
    sns: Array(alerts).fill(0),
  };
  // One message carries one alert; the summary appears more than once in a body, so count distinct markers.
  const counter = (ch: Channel) => (body: string) =>
    new Set(markers(body)).forEach((n) => {
      if (n < alerts) received[ch][n] = (received[ch][n] ?? 0) + 1;
    });
  const db = await startLocalDynamoDb('kill-loop');
  const seen = { requests: 0 };
  const slack = await delayedServer('ok', options.maxReplyDelayMs ?? 50, counter('slack'), seen);
  const feishu = await delayedServer(
    '{"code":0,"msg":"success","data":{}}',
    options.maxReplyDelayMs ?? 50,
    counter('feishu'),
    seen,
  );
  const sns = await startSnsServer();
  const requests = () => seen.requests + sns.publishes.length;
  const env = {
    HOST: '127.0.0.1',
    PORT: '0',
    TABLE_NAME: db.tableName,
    AWS_ENDPOINT_URL_DYNAMODB: db.endpoint,
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    AWS_REGION: 'eu-west-1',
    SLACK_WEBHOOK_URL: `${slack.url}/services/T0/B0/kill`,
    FEISHU_WEBHOOK_URL: `${feishu.url}/open-apis/bot/v2/hook/kill`,
    SNS_TOPIC_ARN: 'arn:aws:sns:eu-west-1:123456789012:kill-loop',
    AWS_ENDPOINT_URL_SNS: sns.endpoint,
    DEDUPE_LEASE_MS: String(LEASE_MS),
    LOG_LEVEL: 'info',
  };
  const answered = new Set<number>();
  const posts = { ok: 0, retry: 0, killed: 0 };
  const postTo = async (p: PipelineProcess, n: number) => {
    try {
      const res = await fetch(`${p.url}/v1/alertmanager`, {
        method: 'POST',
        body: webhook(n),
        headers: { 'content-type': 'application/json' },
      });
      await res.arrayBuffer();
      if (res.status === 200) answered.add(n);
      posts[res.status === 200 ? 'ok' : 'retry'] += 1;
    } catch {
      posts.killed += 1;
    }
  };
  try {
    for (let n = 0; n < options.kills; n++) {
      const p = await startPipelineProcess(env);
      // Alertmanager's retries of the alerts not answered yet, then the new one; killed wherever it is:
      // a random point measured in channel requests (0 to all this round could make), plus jitter,
      // so kills land before, during and after the deliveries whatever the machine's speed.
      const pending = [...Array(n).keys()].filter((m) => !answered.has(m)).concat(n);
      const before = requests();
      const k = Math.floor(Math.random() * (3 * pending.length + 1));
      const inFlight = pending.map((m) => postTo(p, m));
      const settled = Promise.all(inFlight);
      await pollUntil(
        async () => (requests() - before >= k ? true : undefined),
        () => '',
        { deadlineMs: KILL_FALLBACK_MS, intervalMs: 2 },
      ).catch(() => undefined);
      await Promise.race([settled, new Promise((r) => setTimeout(r, Math.random() * KILL_JITTER_MS))]);
      await p.kill();
      await Promise.all(inFlight);
      log(`kill ${n + 1}/${options.kills}: answered ${answered.size}/${n + 1}`);
    }
    const last = await startPipelineProcess(env);
    for (let round = 0; round < SETTLE_ROUNDS && answered.size < alerts; round++) {
      await Promise.all([...Array(alerts).keys()].filter((m) => !answered.has(m)).map((m) => postTo(last, m)));
      if (answered.size < alerts) await new Promise((r) => setTimeout(r, LEASE_MS / 2));
    }
    await last.stop();
  } finally {
    await Promise.all([slack.close(), feishu.close(), sns.close(), db.close()]);
  }
  for (const body of sns.publishes.map((p) => `${p.Subject ?? ''}\n${p.Message ?? ''}`)) counter('sns')(body);
  const channels: Channel[] = ['slack', 'feishu', 'sns'];
  const sum = (f: (n: number) => number) =>
    Object.fromEntries(channels.map((ch) => [ch, received[ch].reduce((a, n) => a + f(n), 0)])) as Record<
      Channel,
      number
    >;
  return {
    kills: options.kills,
    alerts,
    received,
    duplicates: sum((n) => Math.max(0, n - 1)),
    missing: sum((n) => (n === 0 ? 1 : 0)),
    posts,
  };
}
