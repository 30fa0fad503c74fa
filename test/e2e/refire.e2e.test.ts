/**
 * A resolve by a missed resend, with real parts only: simulated vLLM /metrics ─scrape─▶ real
 * Prometheus (shipped rules, `for: 0s`) ─▶ a loopback relay we can cut (the network blip) ─▶ real
 * Alertmanager ─webhook─▶ `npm start`'s entry (PROMETHEUS_URL set: the source of truth) ─▶ loopback
 * Slack, Feishu and SNS.
 *
 * While the relay is cut, Prometheus's resends do not arrive, the alert's `endsAt` passes and
 * Alertmanager sends it resolved; when the relay is restored Prometheus's next resend makes
 * Alertmanager send it firing again with the same `startsAt` and `fingerprint`. Prometheus's `ALERTS`
 * says it fires, so every channel's last message is FIRING. Waits are bounded polls.
 */
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAlertmanagerAndPipeline, type AlertmanagerAndPipeline } from '../helpers/alertmanager-pipeline.js';
import { startLoopback, type Loopback } from '../helpers/loopback.js';
import { startRelay, type Relay } from '../helpers/relay.js';
import type { PipelineProcess } from '../helpers/pipeline-process.js';
import { makeTempDir, pollUntil, startPrometheus, writeFastRules, type RunningProcess } from '../helpers/processes.js';
import { startSnsServer, type SnsStandIn } from '../helpers/sns-server.js';
import { startVllmSim, type VllmSim } from '../helpers/vllm-sim.js';

const TOPIC_ARN = 'arn:aws:sns:eu-west-1:123456789012:vllm-alerts';
const STEP_TIMEOUT_MS = 90_000;

let sim: VllmSim;
let slack: Loopback;
let feishu: Loopback;
let sns: SnsStandIn;
let stack: AlertmanagerAndPipeline;
let pipeline: PipelineProcess;
let alertmanager: RunningProcess;
let prometheus: RunningProcess;
let relay: Relay;
let rulesDir: string;

beforeAll(async () => {
  sim = await startVllmSim();
  sim.set('qwen3-8b', { requestsWaiting: 0, requestsRunning: 12 });
  [slack, feishu, sns] = await Promise.all([
    startLoopback(),
    startLoopback({ status: 200, body: '{"code":0,"msg":"success","data":{}}' }),
    startSnsServer(),
  ]);
  stack = await startAlertmanagerAndPipeline(async (started) => {
    relay = await startRelay(() => started.alertmanager.url);
    rulesDir = await makeTempDir('e2e-refire-rules');
    prometheus = await startPrometheus({
      scrapeTargets: [sim.url],
      rulesFiles: [await writeFastRules(rulesDir)],
      alertmanagerUrl: relay.url,
    });
    return {
      PROMETHEUS_URL: prometheus.url,
      SLACK_WEBHOOK_URL: `${slack.url}/services/T000/B000/e2e`,
      FEISHU_WEBHOOK_URL: `${feishu.url}/open-apis/bot/v2/hook/e2e`,
      SNS_TOPIC_ARN: TOPIC_ARN,
      AWS_ENDPOINT_URL_SNS: sns.endpoint,
      AWS_ACCESS_KEY_ID: 'e2e',
      AWS_SECRET_ACCESS_KEY: 'e2e',
    };
  });
  ({ alertmanager, pipeline } = stack);
}, 120_000);

afterAll(async () => {
  await Promise.allSettled([prometheus?.stop(), stack?.stop()]);
  await Promise.allSettled([sim?.close(), slack?.close(), feishu?.close(), sns?.close(), relay?.close()]);
  if (rulesDir) await rm(rulesDir, { recursive: true, force: true });
});

/** Each channel's messages about the alert, oldest first, as `firing` / `resolved` / `firing again`. */
function said(): Record<string, string[]> {
  // Feishu speaks zh-CN by default: 再次告警 (firing again), 已恢复 (resolved), 告警 (firing).
  const word = (text: string) =>
    /FIRING AGAIN|再次告警/.test(text)
      ? 'firing again'
      : /RESOLVED|已恢复/.test(text)
        ? 'resolved'
        : /FIRING|告警/.test(text)
          ? 'firing'
          : 'other';
  return {
    slack: slack.requests.map((r) => word((JSON.parse(r.body.toString('utf8')) as { text: string }).text)),
    feishu: feishu.requests.map((r) =>
      word(JSON.stringify((JSON.parse(r.body.toString('utf8')) as { card: { header: unknown } }).card.header)),
    ),
    sns: sns.publishes.map((p) => word(`${p.Message}`)),
  };
}

function context(): string {
  return `${JSON.stringify(said())}\npipeline:\n${pipeline.out().slice(-4000)}\nalertmanager:\n${alertmanager.output().slice(-2000)}`;
}

const everyChannel = (n: number) => async () => (Object.values(said()).every((m) => m.length >= n) ? true : undefined);

describe('a resolve by a missed resend, then the same alert firing again (real Prometheus and Alertmanager)', () => {
  it(
    'fires, is resolved by Alertmanager while Prometheus cannot reach it, and ends FIRING on every channel',
    async () => {
      sim.set('qwen3-8b', { requestsWaiting: 80 });
      await pollUntil(everyChannel(1), context, { deadlineMs: 45_000 });
      expect(said()).toEqual({ slack: ['firing'], feishu: ['firing'], sns: ['firing'] });

      relay.cut = true; // Prometheus's resends stop arriving; the alert still fires in Prometheus.
      await pollUntil(everyChannel(2), context, { deadlineMs: 45_000 });
      expect(said()).toEqual({
        slack: ['firing', 'resolved'],
        feishu: ['firing', 'resolved'],
        sns: ['firing', 'resolved'],
      });

      relay.cut = false; // Prometheus's next resend reaches Alertmanager: the same alert, the same startsAt.
      await pollUntil(everyChannel(3), context, { deadlineMs: 45_000 });
      expect(said()).toEqual({
        slack: ['firing', 'resolved', 'firing again'],
        feishu: ['firing', 'resolved', 'firing again'],
        sns: ['firing', 'resolved', 'firing again'],
      });
      // npm start writes its info lines in batches (up to 50 ms after the message went out): wait for the line.
      const deduped = () =>
        pipeline.logs.filter((l) => l.event === 'alert deduped' && l.alertname === 'VLLMQueueBacklog');
      const again = await pollUntil(async () => deduped().find((l) => l.decision === 'firing again'), context, {
        deadlineMs: 10_000,
      });
      const firings = deduped()
        .filter((l) => l.status === 'firing')
        .map((l) => l.startsAt);
      expect(new Set(firings).size).toBe(1); // the same startsAt throughout
      expect(again).toMatchObject({ source: 'prometheus', verdict: 'firing', generation: 1 });
    },
    STEP_TIMEOUT_MS,
  );
});
