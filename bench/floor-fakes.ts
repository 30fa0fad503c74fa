/**
 * The loopback world of the floor benchmark: one HTTP server stands in for Slack's and Feishu's
 * webhooks and for Prometheus's instant and range query API (empty results), and the SNS stand-in of
 * the tests. Each records when the last message arrived, so a storm's "digests out" can be read.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startSnsServer, type SnsStandIn } from '../test/helpers/sns-server.js';

const EMPTY_VECTOR = '{"status":"success","data":{"resultType":"vector","result":[]}}';
const EMPTY_MATRIX = '{"status":"success","data":{"resultType":"matrix","result":[]}}';

export interface Fakes {
  /** Base URL of the Slack/Feishu/Prometheus stand-in. */
  url: string;
  sns: SnsStandIn;
  /** Messages received, by platform. */
  counts(): { slack: number; feishu: number; sns: number; prometheus: number };
  /** `performance.now()` when the last Slack or Feishu message arrived. */
  lastMessageAt(): number;
  reset(): void;
  close(): Promise<void>;
}

export async function startFakes(): Promise<Fakes> {
  const counts = { slack: 0, feishu: 0, prometheus: 0 };
  let last = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const path = req.url ?? '';
      if (path.startsWith('/api/v1/')) {
        counts.prometheus++;
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(path.includes('query_range') ? EMPTY_MATRIX : EMPTY_VECTOR);
        return;
      }
      last = performance.now();
      if (path.startsWith('/feishu')) {
        counts.feishu++;
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"code":0,"msg":"success"}');
      } else {
        counts.slack++;
        res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      }
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const sns = await startSnsServer();
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    sns,
    counts: () => ({ ...counts, sns: sns.publishes.length }),
    lastMessageAt: () => last,
    reset: () => {
      counts.slack = counts.feishu = counts.prometheus = 0;
      sns.publishes.length = 0;
      sns.requests.length = 0;
    },
    close: async () => {
      server.closeAllConnections();
      await Promise.all([new Promise((resolve) => server.close(resolve)), sns.close()]);
    },
  };
}

/** The product's settings for these fakes: three channels, enrichment and acknowledgement links. */
export function productEnv(fakes: Fakes): Record<string, string> {
  return {
    SLACK_WEBHOOK_URL: `${fakes.url}/slack/hook`,
    FEISHU_WEBHOOK_URL: `${fakes.url}/feishu/hook`,
    SNS_TOPIC_ARN: 'arn:aws:sns:eu-west-1:123456789012:bench',
    AWS_ENDPOINT_URL_SNS: fakes.sns.endpoint,
    AWS_ACCESS_KEY_ID: 'bench',
    AWS_SECRET_ACCESS_KEY: 'bench',
    AWS_REGION: 'eu-west-1',
    PROMETHEUS_URL: fakes.url,
    PUBLIC_URL: 'https://alerts.example.com',
    ACK_SECRET: 'bench-ack-secret-0123456789abcdef0123456789',
    HEARTBEAT_ALERTNAME: '',
  };
}
