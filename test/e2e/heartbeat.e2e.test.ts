/**
 * The dead-man's switch end to end, with real parts only: the shipped Watchdog rule in a real
 * Prometheus ─▶ a real Alertmanager (shipped example config, its Watchdog route) ─webhook, bearer
 * token─▶ `npm start`'s entry (HEARTBEAT_TIMEOUT_SECONDS=4) ─▶ a loopback Slack. Stopping Alertmanager
 * must bring the missing-heartbeat message; starting it again (same port, so the same externalURL)
 * the resolved one. `GET /metrics` shows the counters moving. Waits are bounded polls, never timings.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireBinaries } from '../helpers/binaries.js';
import { startLoopback, type Loopback } from '../helpers/loopback.js';
import { startPipelineProcess, type PipelineProcess } from '../helpers/pipeline-process.js';
import {
  freePort,
  pollUntil,
  SHIPPED,
  startAlertmanager,
  startPrometheus,
  type RunningProcess,
} from '../helpers/processes.js';

const TOKEN = 'heartbeat-e2e-token-0123456789';
const PIPELINE_RULES = SHIPPED.rules.replace('vllm-rules.yml', 'pipeline-rules.yml');
const STEP_TIMEOUT_MS = 50_000;

let slack: Loopback;
let pipeline: PipelineProcess;
let alertmanager: RunningProcess;
let prometheus: RunningProcess;
let amPort: number;
let webhookUrl: string;

const startAm = () =>
  startAlertmanager({
    webhookUrl,
    bearerToken: TOKEN,
    groupWait: '1s',
    groupInterval: '1s',
    repeatInterval: '1s',
    port: amPort,
  });

beforeAll(async () => {
  requireBinaries();
  slack = await startLoopback();
  const port = await freePort();
  amPort = await freePort();
  webhookUrl = `http://127.0.0.1:${port}/v1/alertmanager`;
  alertmanager = await startAm();
  prometheus = await startPrometheus({
    scrapeTargets: [alertmanager.url],
    jobName: 'alertmanager',
    rulesFiles: [PIPELINE_RULES],
    alertmanagerUrl: alertmanager.url,
  });
  pipeline = await startPipelineProcess({
    PORT: String(port),
    HOST: '127.0.0.1',
    WEBHOOK_TOKEN: TOKEN,
    SLACK_WEBHOOK_URL: `${slack.url}/services/T000/B000/heartbeat`,
    HEARTBEAT_TIMEOUT_SECONDS: '4',
  });
}, 120_000);

afterAll(async () => {
  await Promise.allSettled([prometheus?.stop(), alertmanager?.stop(), pipeline?.stop()]);
  await slack?.close();
});

async function metrics(): Promise<string> {
  const res = await fetch(`${pipeline.url}/metrics`, {
    headers: { authorization: `Bearer ${TOKEN}` },
    signal: AbortSignal.timeout(2000),
  });
  expect(res.status).toBe(200);
  return res.text();
}

function slackTexts(): string[] {
  return slack.requests.map((r) => (JSON.parse(r.body.toString('utf8')) as { text: string }).text);
}

function context(): string {
  return `slack: ${JSON.stringify(slackTexts())}\npipeline:\n${pipeline.out().slice(-4000)}\nalertmanager:\n${alertmanager.output().slice(-2000)}`;
}

describe('Watchdog → Alertmanager → pipeline', () => {
  it(
    'records heartbeats without sending them, visible on GET /metrics',
    async () => {
      const seen = await pollUntil(async () => {
        const text = await metrics();
        return /llm_alert_pipeline_heartbeat_last_seen_timestamp_seconds\{alertmanager="([^"]+)"\} \d/.exec(text)?.[1];
      }, context);
      expect(seen).toMatch(new RegExp(`:${amPort}/?$`));
      // A heartbeat is watched once it repeats: wait for Alertmanager's next delivery (repeat_interval 1s).
      const lastSeen = async () =>
        /llm_alert_pipeline_heartbeat_last_seen_timestamp_seconds\{alertmanager="[^"]+"\} (\S+)/.exec(
          await metrics(),
        )?.[1];
      const first = await lastSeen();
      await pollUntil(async () => ((await lastSeen()) !== first ? true : undefined), context);
      const text = await metrics();
      expect(text).toMatch(/llm_alert_pipeline_alerts_received_total [1-9]/);
      expect(text).toMatch(/llm_alert_pipeline_webhook_requests_total\{code="200"\} [1-9]/);
      expect(slack.requests).toHaveLength(0);
    },
    STEP_TIMEOUT_MS,
  );

  it(
    'sends AlertingPipelineHeartbeatMissing when Alertmanager stops',
    async () => {
      await alertmanager.stop();
      await pollUntil(async () => (slack.requests.length ? true : undefined), context, { deadlineMs: 40_000 });
      const [text] = slackTexts();
      expect(text).toMatch(/FIRING/);
      expect(text).toContain('AlertingPipelineHeartbeatMissing');
      expect(await metrics()).toMatch(/llm_alert_pipeline_heartbeat_missing\{alertmanager="[^"]+"\} 1/);
      expect(await metrics()).toMatch(
        /llm_alert_pipeline_notifications_total\{channel="slack",outcome="delivered",reason="ok"\} 1/,
      );
    },
    STEP_TIMEOUT_MS,
  );

  it(
    'resolves it when Alertmanager is back',
    async () => {
      alertmanager = await startAm();
      await pollUntil(async () => (slack.requests.length >= 2 ? true : undefined), context, { deadlineMs: 40_000 });
      const texts = slackTexts();
      expect(texts[1]).toMatch(/RESOLVED/);
      expect(texts[1]).toContain('AlertingPipelineHeartbeatMissing');
      // Only the pipeline's own alert reached Slack, never the Watchdog itself.
      expect(texts).toHaveLength(2);
      expect(await metrics()).toMatch(/llm_alert_pipeline_heartbeat_missing\{alertmanager="[^"]+"\} 0/);
    },
    STEP_TIMEOUT_MS,
  );
});
