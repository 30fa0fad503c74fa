/**
 * What the real Alertmanager sends, as it sends it: `npm start`'s entry as a child process behind a
 * receiver URL written with a trailing slash, bearer token, a loopback Slack. Between Alertmanager and
 * the pipeline sits a plain TCP relay that only counts connections (it forwards bytes and closes as
 * either side closes), so the test can see whether Alertmanager's connection was kept.
 *
 * Asserts: the trailing-slash URL delivers; the fingerprints Alertmanager gives (API v2) are the ones
 * `labelSetFingerprint` computes for payloads that carry none; a notification sent after the
 * connections were idle longer than Node's default keep-alive (5 s) goes out on a kept connection,
 * with no `EOF` or failed attempt in Alertmanager's log. The idle gap is one bounded wait; nothing
 * about timing is asserted.
 * Missing binaries fail this suite (see test/helpers/binaries.ts); it never skips.
 */
import { connect, createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { labelSetFingerprint } from '../../shared/alertmanager/fingerprint.js';
import {
  pushAlerts,
  startAlertmanagerAndPipeline,
  type AlertmanagerAndPipeline,
} from '../helpers/alertmanager-pipeline.js';
import { startLoopback, type Loopback } from '../helpers/loopback.js';
import type { PipelineProcess } from '../helpers/pipeline-process.js';
import { pollUntil, type RunningProcess } from '../helpers/processes.js';

const TOKEN = 'wire-e2e-token-0123456789';
/** Longer than Node's default `keepAliveTimeout` (5 s), far shorter than Alertmanager's idle time (5 min). */
const IDLE_GAP_MS = 7_000;
/** What Alertmanager logs when a notification attempt fails (e.g. `Post "…": EOF`). */
const FAILED_ATTEMPT = /EOF|Notify attempt failed|Notify for alerts failed|connection reset/;

let slack: Loopback;
let stack: AlertmanagerAndPipeline;
let pipeline: PipelineProcess;
let alertmanager: RunningProcess;
let relay: Relay;

interface Relay {
  port: number;
  /** TCP connections accepted so far. */
  connections: number;
  close(): Promise<void>;
}

/** A loopback TCP relay to `targetPort` that counts the connections it accepts. */
async function startRelay(targetPort: number): Promise<Relay> {
  const relay = { port: 0, connections: 0, close: () => new Promise<void>((ok) => server.close(() => ok())) };
  const server: Server = createServer((client) => {
    relay.connections++;
    const upstream = connect(targetPort, '127.0.0.1');
    client.pipe(upstream).on('error', () => client.destroy());
    upstream.pipe(client).on('error', () => upstream.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  relay.port = (server.address() as { port: number }).port;
  return relay;
}

beforeAll(async () => {
  slack = await startLoopback();
  stack = await startAlertmanagerAndPipeline(
    () => ({ WEBHOOK_TOKEN: TOKEN, SLACK_WEBHOOK_URL: `${slack.url}/services/T000/B000/wire` }),
    {
      alertmanager: { bearerToken: TOKEN },
      webhookUrl: async (port) => {
        relay = await startRelay(port);
        return `http://127.0.0.1:${relay.port}/v1/alertmanager/`;
      },
    },
  );
  ({ alertmanager, pipeline } = stack);
}, 90_000);

afterAll(async () => {
  await stack?.stop();
  await Promise.allSettled([slack?.close(), relay?.close()]);
});

/** Hands Alertmanager alerts through its API v2, as Prometheus does. */
async function fire(labels: Record<string, string>[]): Promise<void> {
  await pushAlerts(
    alertmanager.url,
    labels.map((l) => ({ labels: l, annotations: { summary: `${l.alertname} on ${l.model_name}` } })),
  );
}

function context(): string {
  return `slack=${slack.requests.length}\npipeline:\n${pipeline.out().slice(-3000)}\nalertmanager:\n${alertmanager.output().slice(-3000)}`;
}

const QUEUE = { alertname: 'VLLMQueueBacklog', severity: 'warning', kind: 'queue', model_name: 'qwen3-8b' };

describe('real Alertmanager → npm start', () => {
  it('delivers through a receiver URL with a trailing slash, without a failed attempt', async () => {
    await fire([{ ...QUEUE, instance: 'vllm-0:8000' }]);
    await pollUntil(async () => (slack.requests.length >= 1 ? true : undefined), context, { deadlineMs: 30_000 });
    expect(pipeline.logs.filter((l) => l.event === 'request rejected')).toEqual([]);
    expect(alertmanager.output()).not.toMatch(FAILED_ATTEMPT);
  }, 40_000);

  it('gives, for labels of every kind, the fingerprint Alertmanager itself gives', async () => {
    const sets: Record<string, string>[] = [
      {
        alertname: 'GPUMemoryLeak',
        Hostname: 'gpu-node-1',
        gpu: '0',
        modelName: 'NVIDIA H100 80GB HBM3',
        severity: 'warning',
      },
      {
        alertname: 'VLLMKVCacheHigh',
        model_name: 'llama-3.1-70b',
        summary_zh: '缓存使用率 97%',
        emoji: '🔥 hot',
        quote: 'a"b\\c',
        _a: '',
        Z9: 'é',
      },
    ];
    await fire(sets);
    const alerts = await pollUntil(
      async () => {
        const res = await fetch(
          `${alertmanager.url}/api/v2/alerts?filter=alertname%3D~%22GPUMemoryLeak%7CVLLMKVCacheHigh%22`,
          { signal: AbortSignal.timeout(5000) },
        );
        const body = (await res.json()) as { labels: Record<string, string>; fingerprint: string }[];
        return body.length === sets.length ? body : undefined;
      },
      context,
      { deadlineMs: 10_000 },
    );
    for (const alert of alerts) expect(labelSetFingerprint(alert.labels)).toBe(alert.fingerprint);
  }, 20_000);

  it(
    "sends on a connection kept through an idle gap longer than Node's default keep-alive, without EOF",
    async () => {
      await pollUntil(async () => (slack.requests.length >= 3 ? true : undefined), context, { deadlineMs: 30_000 });
      const before = { messages: slack.requests.length, connections: relay.connections };
      await new Promise((r) => setTimeout(r, IDLE_GAP_MS));
      // A new alert in the first group: Alertmanager sends the group again, on a connection it kept.
      await fire([{ ...QUEUE, instance: 'vllm-1:8000' }]);
      await pollUntil(async () => (slack.requests.length > before.messages ? true : undefined), context, {
        deadlineMs: 30_000,
      });
      expect(relay.connections).toBe(before.connections);
      expect(alertmanager.output()).not.toMatch(FAILED_ATTEMPT);
    },
    IDLE_GAP_MS + 40_000,
  );
});
