/**
 * One new-alert group through the app in process, as a timeline of its rounds: each DynamoDB request (at the SDK's
 * middleware: sent → answered) and each outbound request reaching the loopback stand-ins (Prometheus, Slack,
 * Feishu, SNS), ms from the post. A probe, not a benchmark row: `npx tsx bench/store-timeline-probe.ts`
 * (`PROBE_N` alerts per group, `PROBE_RUNS` posts after 30 warm-up posts). Complements `timeline-probe.ts`, which sees only the outbound requests of
 * the spawned `npm start`.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SNSClient } from '@aws-sdk/client-sns';
import { createApp } from '../shared/http/app.js';
import { silentLogger } from '../shared/core/logger.js';
import { loadConfig } from '../shared/runtime/config.js';
import { createDeps } from '../shared/runtime/deps.js';
import { startLocalDynamoDb } from '../shared/store/local-dynamodb.js';
import { startSnsServer } from '../test/helpers/sns-server.js';
import { newGroup } from './floor-processes.js';

const EMPTY_VECTOR = '{"status":"success","data":{"resultType":"vector","result":[]}}';
const EMPTY_MATRIX = '{"status":"success","data":{"resultType":"matrix","result":[]}}';
const events: [number, string][] = [];
const now = () => performance.now();

const server = createServer((req, res) => {
  const path = (req.url ?? '').split('?')[0]!;
  events.push([now(), `in  ${path}`]);
  req.resume();
  req.on('end', () => {
    res.on('finish', () => events.push([now(), `out ${path}`]));
    if (path.startsWith('/api/v1/'))
      return void res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(path.includes('query_range') ? EMPTY_MATRIX : EMPTY_VECTOR);
    if (path.startsWith('/feishu'))
      return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"code":0,"msg":"success"}');
    res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
  });
});
server.keepAliveTimeout = 60_000;
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const sns = await startSnsServer();
const snsClient = new SNSClient({
  endpoint: sns.endpoint,
  region: 'eu-west-1',
  credentials: { accessKeyId: 'bench', secretAccessKey: 'bench' },
});
snsClient.middlewareStack.add(
  (next) => async (args) => {
    events.push([now(), 'in  SNS Publish']);
    try {
      return await next(args);
    } finally {
      events.push([now(), 'out SNS Publish']);
    }
  },
  { step: 'initialize', name: 'probeSns' },
);
const db = await startLocalDynamoDb('store-timeline');
db.client.middlewareStack.add(
  (next, context) => async (args) => {
    const name = (context.commandName ?? '?').replace(/Command$/, '');
    events.push([now(), `db> ${name}`]);
    try {
      return await next(args);
    } finally {
      events.push([now(), `db< ${name}`]);
    }
  },
  { step: 'initialize', name: 'probeDynamoDb' },
);
const env = {
  SLACK_WEBHOOK_URL: `${url}/slack/hook`,
  FEISHU_WEBHOOK_URL: `${url}/feishu/hook`,
  SNS_TOPIC_ARN: 'arn:aws:sns:eu-west-1:123456789012:bench',
  AWS_REGION: 'eu-west-1',
  PROMETHEUS_URL: url,
  PUBLIC_URL: 'https://alerts.example.com',
  ACK_SECRET: 'bench-ack-secret-0123456789abcdef0123456789',
  HEARTBEAT_ALERTNAME: '',
  ALLOW_UNAUTHENTICATED: 'true',
  TABLE_NAME: 'store-timeline',
};
const config = loadConfig(env);
const app = createApp(config, createDeps(config, { dynamodb: db.client, sns: snsClient }, silentLogger));
const post = async (body: string) => {
  const res = await app.request('/v1/alertmanager', {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json' },
  });
  if (res.status !== 200) throw new Error(`answer ${res.status} ${await res.text()}`);
};
for (let i = 0; i < 30; i++) await post(newGroup(1 + (i % 10)));
const n = Number(process.env.PROBE_N ?? 1);
const ms: number[] = [];
for (let i = 0; i < Number(process.env.PROBE_RUNS ?? 15); i++) {
  events.length = 0;
  const t0 = now();
  await post(newGroup(n));
  const t = now() - t0;
  ms.push(t);
  if (i === 0 || process.env.PROBE_ALL) {
    console.log(`--- run ${i}: ${t.toFixed(1)} ms`);
    for (const [at, e] of events.sort((a, b) => a[0] - b[0])) console.log(`${(at - t0).toFixed(1).padStart(6)}  ${e}`);
    console.log(`${t.toFixed(1).padStart(6)}  answered`);
  }
}
ms.sort((a, b) => a - b);
console.log(`n=${n} median ${ms[ms.length >> 1]!.toFixed(1)} ms; all ${ms.map((m) => m.toFixed(1)).join(' ')}`);
snsClient.destroy();
server.closeAllConnections();
server.close();
await sns.close();
await db.close();
