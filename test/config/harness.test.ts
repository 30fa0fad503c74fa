/**
 * Proves the end-to-end harness: the simulated vLLM endpoint is scraped by the real
 * Prometheus, the fast-firing copy of the shipped rules fires, the real Alertmanager (running
 * the shipped example config) holds the alert, inhibits as configured and posts a v4 webhook
 * with the bearer token to a loopback receiver. Waits are bounded polls, never sleeps.
 */
import { rm } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webhookSchema, type WebhookMessage } from '../../shared/alertmanager/schema.js';
import {
  makeTempDir,
  pollUntil,
  startAlertmanager,
  startPrometheus,
  writeFastRules,
  type RunningProcess,
} from '../helpers/processes.js';
import { startVllmSim, type VllmSim } from '../helpers/vllm-sim.js';

const TOKEN = 'harness-token-0123456789abcdef';
/** Per-test timeout: above pollUntil's 40 s deadline, so a miss fails with its message. */
const POLL_TIMEOUT_MS = 45_000;

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

interface AmAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  status: { state: string; inhibitedBy: string[] };
}

let sim: VllmSim;
let receiver: Server;
let receiverUrl: string;
const received: Received[] = [];
let alertmanager: RunningProcess;
let prometheus: RunningProcess;
let tempDir: string;

function startReceiver(): Promise<void> {
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.writeHead(200).end();
    });
  });
  return new Promise((ok) =>
    receiver.listen(0, '127.0.0.1', () => {
      receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/v1/alertmanager`;
      ok();
    }),
  );
}

beforeAll(async () => {
  sim = await startVllmSim();
  sim.set('qwen3-8b', { requestsWaiting: 80, requestsRunning: 16 });
  sim.set('llama-3.1-70b', { requestsWaiting: 10, generation: 'v0' });
  await startReceiver();
  alertmanager = await startAlertmanager({ webhookUrl: receiverUrl, bearerToken: TOKEN });
  tempDir = await makeTempDir('harness-rules');
  prometheus = await startPrometheus({
    scrapeTargets: [sim.url],
    rulesFiles: [await writeFastRules(tempDir)],
    alertmanagerUrl: alertmanager.url,
  });
});

afterAll(async () => {
  await Promise.allSettled([prometheus?.stop(), alertmanager?.stop()]);
  await sim?.close();
  await new Promise((ok) => receiver?.close(ok));
  if (tempDir) await rm(tempDir, { recursive: true, force: true });
});

async function getJson<T>(url: string): Promise<T> {
  const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
  if (!response.ok) throw new Error(`GET ${url}: HTTP ${response.status}`);
  return (await response.json()) as T;
}

async function amAlerts(alertname: string): Promise<AmAlert[]> {
  const filter = encodeURIComponent(`alertname="${alertname}"`);
  return getJson<AmAlert[]>(`${alertmanager.url}/api/v2/alerts?filter=${filter}`);
}

/** Webhook payloads received so far, validated against the pipeline's own schema. */
function payloads(): WebhookMessage[] {
  return received.map((r) => webhookSchema.parse(JSON.parse(r.body)));
}

const logs = () =>
  `\nprometheus:\n${prometheus.output().slice(-2000)}\nalertmanager:\n${alertmanager.output().slice(-2000)}`;

describe('e2e harness: vllm-sim → Prometheus → Alertmanager → webhook', () => {
  it(
    'has Prometheus scraping the simulated vLLM endpoint',
    async () => {
      type Vector = { data: { result: { metric: Record<string, string>; value: [number, string] }[] } };
      const url = `${prometheus.url}/api/v1/query?query=${encodeURIComponent('vllm:num_requests_waiting')}`;
      const result = await pollUntil(async () => {
        const series = (await getJson<Vector>(url)).data.result;
        return series.length === 2 ? series : undefined;
      }, logs);
      const byModel = Object.fromEntries(result.map((s) => [s.metric.model_name, s.value[1]]));
      expect(byModel).toEqual({ 'qwen3-8b': '80', 'llama-3.1-70b': '10' });
    },
    POLL_TIMEOUT_MS,
  );

  it(
    'fires the shipped VLLMQueueBacklog rule for the model with > 50 waiting, and Alertmanager holds it',
    async () => {
      const alerts = await pollUntil(async () => {
        const found = await amAlerts('VLLMQueueBacklog');
        return found.length > 0 ? found : undefined;
      }, logs);
      expect(alerts).toHaveLength(1);
      expect(alerts[0]?.labels).toEqual({
        alertname: 'VLLMQueueBacklog',
        model_name: 'qwen3-8b',
        severity: 'warning',
        kind: 'queue',
      });
      expect(alerts[0]?.annotations.summary).toBe('qwen3-8b: 80 requests waiting');
      expect(alerts[0]?.status.state).toBe('active');
    },
    POLL_TIMEOUT_MS,
  );

  it(
    'posts a v4 webhook with the bearer token to the llm-alert-pipeline receiver',
    async () => {
      const message = await pollUntil(
        async () => payloads().find((p) => p.groupLabels.alertname === 'VLLMQueueBacklog'),
        logs,
      );
      const request = received.find((r) => r.body.includes('"VLLMQueueBacklog"'));
      expect(request?.headers.authorization).toBe(`Bearer ${TOKEN}`);
      expect(message).toMatchObject({
        receiver: 'llm-alert-pipeline',
        status: 'firing',
        groupLabels: { model_name: 'qwen3-8b' },
      });
      expect(message.alerts[0]?.generatorURL).toContain('vllm%3Anum_requests_waiting');
    },
    POLL_TIMEOUT_MS,
  );

  it(
    'inhibits a warning when a critical alert of the same alertname and model fires',
    async () => {
      const alert = (model: string, severity: string) => ({
        labels: { alertname: 'InhibitionProbe', model_name: model, severity },
      });
      const post = await fetch(`${alertmanager.url}/api/v2/alerts`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify([alert('a', 'critical'), alert('a', 'warning'), alert('b', 'warning')]),
      });
      expect(post.status).toBe(200);
      // The inhibitor learns of the critical alert asynchronously: poll briefly for it to act.
      let last: AmAlert[] = [];
      const alerts = await pollUntil(
        async () => {
          last = await amAlerts('InhibitionProbe');
          return last.length === 3 && last.some((a) => a.status.state === 'suppressed') ? last : undefined;
        },
        () => JSON.stringify(last.map((a) => [a.labels, a.status.state])),
        { deadlineMs: 10_000 },
      );
      const state = (model: string, severity: string) =>
        alerts.find((a) => a.labels.model_name === model && a.labels.severity === severity)?.status.state;
      expect([state('a', 'critical'), state('a', 'warning'), state('b', 'warning')]).toEqual([
        'active',
        'suppressed',
        'active',
      ]);
    },
    POLL_TIMEOUT_MS,
  );

  it(
    'sends the resolved notification once the queue drains',
    async () => {
      sim.set('qwen3-8b', { requestsWaiting: 0 });
      const resolved = await pollUntil(
        async () => payloads().find((p) => p.groupLabels.alertname === 'VLLMQueueBacklog' && p.status === 'resolved'),
        logs,
      );
      expect(resolved.alerts.map((a) => [a.labels.model_name, a.status])).toEqual([['qwen3-8b', 'resolved']]);
    },
    POLL_TIMEOUT_MS,
  );
});
