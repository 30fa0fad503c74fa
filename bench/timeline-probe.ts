/**
 * One new-alert group through `npm start` (its bundle and flags), as a timeline: when each outbound request
 * (Prometheus, Slack, Feishu, SNS) reached the loopback fakes and was answered, ms from the post, with its
 * body size. A probe, not a benchmark row: `npx tsx bench/timeline-probe.ts` (`PROBE_N` alerts, `PROBE_RUNS`
 * posts after 40 warm-up posts, `PROBE_ALL=1` prints every run, `PROBE_NODE_ARGS="--cpu-prof ..."`,
 * `BENCH_LOG_DIR` keeps the product's log). The product's own stages are in its log lines.
 */
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startSnsServer } from '../test/helpers/sns-server.js';
import { newGroup, npmStartArgs, npmStartEnv, post, serve } from './floor-processes.js';

const now = () => performance.timeOrigin + performance.now();
const events: [number, string][] = [];
const EMPTY_VECTOR = '{"status":"success","data":{"resultType":"vector","result":[]}}';
const EMPTY_MATRIX = '{"status":"success","data":{"resultType":"matrix","result":[]}}';
const server = createServer((req, res) => {
  const t = now();
  let bytes = 0;
  req.on('data', (d: Buffer) => void (bytes += d.length));
  req.on('end', () => {
    const path = req.url ?? '';
    events.push([t, `in  ${path.split('?')[0]} ${bytes} B`]);
    res.on('finish', () => events.push([now(), `out ${path.split('?')[0]}`]));
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
const snsProxy = createServer((req, res) => {
  events.push([now(), 'in  SNS Publish']);
  const up = request(sns.endpoint, { method: req.method, path: req.url, headers: req.headers }, (r) => {
    res.writeHead(r.statusCode!, r.headers);
    r.pipe(res);
    res.on('finish', () => events.push([now(), 'out SNS Publish']));
  });
  req.pipe(up);
});
snsProxy.keepAliveTimeout = 60_000;
await new Promise<void>((r) => snsProxy.listen(0, '127.0.0.1', r));
const env = {
  SLACK_WEBHOOK_URL: `${url}/slack/hook`,
  FEISHU_WEBHOOK_URL: `${url}/feishu/hook`,
  SNS_TOPIC_ARN: 'arn:aws:sns:eu-west-1:123456789012:bench',
  AWS_ENDPOINT_URL_SNS: `http://127.0.0.1:${(snsProxy.address() as AddressInfo).port}`,
  AWS_ACCESS_KEY_ID: 'bench',
  AWS_SECRET_ACCESS_KEY: 'bench',
  AWS_REGION: 'eu-west-1',
  PROMETHEUS_URL: url,
  PUBLIC_URL: 'https://alerts.example.com',
  ACK_SECRET: 'bench-ack-secret-0123456789abcdef0123456789',
  HEARTBEAT_ALERTNAME: '',
};
const args = npmStartArgs();
const extra = (process.env.PROBE_NODE_ARGS ?? '').split(' ').filter(Boolean);
const product = await serve([...extra, ...args], { ...npmStartEnv(), ...env, PORT: '0', HOST: '127.0.0.1' });
const n = Number(process.env.PROBE_N ?? 1);
for (let i = 0; i < 40; i++) await post(product.url, newGroup(1 + (i % 10)));
const ms: number[] = [];
for (let i = 0; i < Number(process.env.PROBE_RUNS ?? 15); i++) {
  events.length = 0;
  const t0 = now();
  const r = await post(product.url, newGroup(n));
  ms.push(r.ms);
  if (i === 0 || process.env.PROBE_ALL) {
    console.log(`--- run ${i}: ${r.ms.toFixed(1)} ms`);
    for (const [t, e] of events.sort((a, b) => a[0] - b[0])) console.log(`${(t - t0).toFixed(1).padStart(6)}  ${e}`);
  }
}
ms.sort((a, b) => a - b);
console.log(`n=${n} median ${ms[ms.length >> 1]!.toFixed(1)} ms; all ${ms.map((m) => m.toFixed(1)).join(' ')}`);
await product.stop();
server.close();
snsProxy.close();
await sns.close();
