/**
 * The main job end to end, with real parts only:
 * simulated vLLM /metrics ─scrape─▶ real Prometheus (shipped rules, `for: 0s`) ─▶ real Alertmanager
 * (shipped example config) ─webhook, bearer token─▶ `npm start`'s entry as a child process (embedded
 * dynalite) ─▶ loopback Slack, Feishu (signature verified) and SNS (the real SDK's wire request).
 *
 * Asserts: one enriched message per channel when the alert fires, none when Alertmanager resends
 * the same group (`repeat_interval`), one resolved message. Waits are bounded polls, never timings.
 * Missing binaries fail this suite (see test/helpers/binaries.ts); it never skips.
 */
import { createHmac } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAlertmanagerAndPipeline, type AlertmanagerAndPipeline } from '../helpers/alertmanager-pipeline.js';
import type { PipelineProcess } from '../helpers/pipeline-process.js';
import { startLoopback, type Loopback, type RecordedRequest } from '../helpers/loopback.js';
import { makeTempDir, pollUntil, startPrometheus, writeFastRules, type RunningProcess } from '../helpers/processes.js';
import { startSnsServer, type SnsStandIn } from '../helpers/sns-server.js';
import { startVllmSim, type VllmSim } from '../helpers/vllm-sim.js';

const TOKEN = 'e2e-token-0123456789abcdef';
const FEISHU_SECRET = 'feishu-e2e-secret';
const TOPIC_ARN = 'arn:aws:sns:eu-west-1:123456789012:vllm-alerts';
/** Above pollUntil's 45 s deadlines below, so a miss fails with its context, not a bare time-out. */
const STEP_TIMEOUT_MS = 50_000;

let sim: VllmSim;
let slack: Loopback;
let feishu: Loopback;
let sns: SnsStandIn;
let stack: AlertmanagerAndPipeline;
let pipeline: PipelineProcess;
let alertmanager: RunningProcess;
let prometheus: RunningProcess;
let rulesDir: string;
const feishuSignatures: boolean[] = [];

/** Feishu's check, written independently of shared/channels/feishu/index.ts: HMAC-SHA256 keyed with `timestamp\nsecret` over "". */
function verifyFeishu(request: RecordedRequest) {
  const body = JSON.parse(request.body.toString('utf8')) as { timestamp?: string; sign?: string };
  const expected = createHmac('sha256', `${body.timestamp}\n${FEISHU_SECRET}`).update('').digest('base64');
  const fresh = Math.abs(Date.now() / 1000 - Number(body.timestamp)) < 3600;
  feishuSignatures.push(body.sign === expected && fresh);
  return body.sign === expected && fresh
    ? { status: 200, body: JSON.stringify({ code: 0, msg: 'success', data: {} }) }
    : {
        status: 200,
        body: JSON.stringify({
          code: 19021,
          msg: 'sign match fail or timestamp is not within one hour from current time',
        }),
      };
}

beforeAll(async () => {
  sim = await startVllmSim();
  sim.set('qwen3-8b', { requestsWaiting: 0, requestsRunning: 12 });
  sim.set('llama-3.1-70b', { requestsWaiting: 3, requestsRunning: 20 });
  [slack, feishu, sns] = await Promise.all([startLoopback(), startLoopback(verifyFeishu), startSnsServer()]);
  // Alertmanager needs the pipeline's URL, Prometheus needs Alertmanager's and the pipeline needs
  // Prometheus's: the pipeline's port is fixed first, Prometheus started between the two.
  stack = await startAlertmanagerAndPipeline(
    async (started) => {
      rulesDir = await makeTempDir('e2e-rules');
      prometheus = await startPrometheus({
        scrapeTargets: [sim.url],
        rulesFiles: [await writeFastRules(rulesDir)],
        alertmanagerUrl: started.alertmanager.url,
      });
      return {
        WEBHOOK_TOKEN: TOKEN,
        PROMETHEUS_URL: prometheus.url,
        SLACK_WEBHOOK_URL: `${slack.url}/services/T000/B000/e2e`,
        FEISHU_WEBHOOK_URL: `${feishu.url}/open-apis/bot/v2/hook/e2e`,
        FEISHU_SECRET,
        SNS_TOPIC_ARN: TOPIC_ARN,
        AWS_ENDPOINT_URL_SNS: sns.endpoint,
        AWS_ACCESS_KEY_ID: 'e2e',
        AWS_SECRET_ACCESS_KEY: 'e2e',
      };
    },
    { alertmanager: { bearerToken: TOKEN, repeatInterval: '2s' } },
  );
  ({ alertmanager, pipeline } = stack);
  // Wait until Prometheus has scraped the simulator, so the first enrichment sees data.
  await pollUntil(
    async () => ((await promQuery('vllm:num_requests_running')).length >= 2 ? true : undefined),
    () => `Prometheus has not scraped ${sim.url}:\n${prometheus.output()}`,
  );
}, 120_000);

async function promQuery(expr: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]> {
  const res = await fetch(`${prometheus.url}/api/v1/query?query=${encodeURIComponent(expr)}`, {
    signal: AbortSignal.timeout(2000),
  });
  return ((await res.json()) as { data: { result: { metric: Record<string, string>; value: [number, string] }[] } })
    .data.result;
}

function slackBodies(): { text: string; blocks: { type: string; text?: { text: string } }[] }[] {
  return slack.requests.map((r) => JSON.parse(r.body.toString('utf8')));
}

function decisions(status: string): string[] {
  return pipeline.logs
    .filter((l) => l.event === 'alert deduped' && l.alertname === 'VLLMQueueBacklog' && l.status === status)
    .map((l) => l.decision as string);
}

function context(): string {
  return (
    `slack=${slack.requests.length} feishu=${feishu.requests.length} sns=${sns.publishes.length}\n` +
    `pipeline:\n${pipeline.out().slice(-4000)}\nalertmanager:\n${alertmanager.output().slice(-2000)}`
  );
}

afterAll(async () => {
  await Promise.allSettled([prometheus?.stop(), stack?.stop()]);
  await Promise.allSettled([sim?.close(), slack?.close(), feishu?.close(), sns?.close()]);
  if (rulesDir) await rm(rulesDir, { recursive: true, force: true });
});

describe('Alertmanager → pipeline → Slack, Feishu, SNS', () => {
  it(
    'delivers one enriched message per channel when the queue backs up',
    async () => {
      sim.set('qwen3-8b', { requestsWaiting: 80 });
      await pollUntil(
        async () => (slack.requests.length && feishu.requests.length && sns.publishes.length ? true : undefined),
        context,
        { deadlineMs: 45_000 },
      );

      const [message] = slackBodies();
      const header = message!.blocks.find((b) => b.type === 'header')!.text!.text;
      expect(header).toMatch(/FIRING/);
      expect(header).toMatch(/warning/);
      expect(header).toMatch(/VLLMQueueBacklog/);
      const sections = message!.blocks
        .filter((b) => b.type === 'section')
        .map((b) => b.text!.text)
        .join('\n');
      expect(sections).toContain('qwen3-8b');
      expect(sections).not.toContain('llama-3.1-70b'); // 3 waiting: below the shipped threshold of 50
      // The fresh values come from the real Prometheus: 80 waiting, 12 running for this model only.
      expect(sections).toMatch(/Requests waiting\W+80\b/);
      expect(sections).toMatch(/Requests running\W+12\b/);
      expect(sections).not.toMatch(/enrichment unavailable/i);
      const links = JSON.stringify(message!.blocks);
      expect(links).toContain('https://runbooks.example.com/vllm/queue-backlog');
      // Links use the externalURL the real processes report (their host name, our ports).
      expect(links).toContain(
        `:${new URL(alertmanager.url).port}/#/silences/new?filter=%7Balertname%3D%22VLLMQueueBacklog%22`,
      );
      expect(links).toContain(
        `:${new URL(prometheus.url).port}/graph?g0.expr=sum+by+%28model_name%29+%28vllm%3Anum_requests_waiting%7Bmodel_name%21%3D%22%22%7D%29+%3E+50`,
      );

      expect(feishuSignatures).toEqual([true]);
      const card = JSON.parse(feishu.requests[0]!.body.toString('utf8'));
      expect(card).toMatchObject({ msg_type: 'interactive', card: { header: { template: 'orange' } } });
      expect(JSON.stringify(card.card.elements)).toContain('qwen3-8b');

      const publish = sns.publishes[0]!;
      expect(publish.TopicArn).toBe(TOPIC_ARN);
      expect(publish.Subject!.length).toBeLessThanOrEqual(100);
      expect(publish.Subject).toMatch(/FIRING.*VLLMQueueBacklog/);
      expect(publish.Message).toMatch(/Requests waiting\W+80\b/);
      expect(publish.MessageAttributes).toMatchObject({
        alertname: { DataType: 'String', StringValue: 'VLLMQueueBacklog' },
        severity: { DataType: 'String', StringValue: 'warning' },
        status: { DataType: 'String', StringValue: 'firing' },
      });
    },
    STEP_TIMEOUT_MS,
  );

  it(
    'sends nothing more when Alertmanager resends the same group',
    async () => {
      // repeat_interval is 2 s: wait until the pipeline has seen Alertmanager resend the alert twice.
      await pollUntil(
        async () => (decisions('firing').filter((d) => d === 'already notified').length >= 2 ? true : undefined),
        context,
        { deadlineMs: 45_000 },
      );
      expect(decisions('firing')[0]).toBe('first notification');
      expect([slack.requests.length, feishu.requests.length, sns.publishes.length]).toEqual([1, 1, 1]);
    },
    STEP_TIMEOUT_MS,
  );

  it(
    'delivers one resolved message when the queue drains',
    async () => {
      sim.set('qwen3-8b', { requestsWaiting: 0 });
      await pollUntil(
        async () =>
          slack.requests.length >= 2 && feishu.requests.length >= 2 && sns.publishes.length >= 2 ? true : undefined,
        context,
        { deadlineMs: 45_000 },
      );
      const resolved = slackBodies()[1]!;
      expect(resolved.blocks.find((b) => b.type === 'header')!.text!.text).toMatch(/RESOLVED.*VLLMQueueBacklog/);
      expect(JSON.parse(feishu.requests[1]!.body.toString('utf8')).card.header.template).toBe('green');
      expect(sns.publishes[1]!.MessageAttributes.status!.StringValue).toBe('resolved');
      expect(feishuSignatures).toEqual([true, true]);
      // npm start writes its info lines in batches (up to 50 ms after the message went out): wait for the line.
      await pollUntil(async () => (decisions('resolved').includes('first notification') ? true : undefined), context, {
        deadlineMs: 10_000,
      });
      expect([slack.requests.length, feishu.requests.length, sns.publishes.length]).toEqual([2, 2, 2]);
    },
    STEP_TIMEOUT_MS,
  );
});
