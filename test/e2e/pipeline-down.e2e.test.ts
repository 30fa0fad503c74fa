/**
 * The pipeline down, with real parts: simulated vLLM /metrics ─scrape─▶ real Prometheus (the shipped
 * vLLM and pipeline rules, `for: 0s`, scraping the pipeline's /metrics too) ─▶ real Alertmanager (the
 * shipped example config) ─▶ `npm start`'s entry with `DATA_DIR` and `PROMETHEUS_URL` ─▶ a loopback
 * Slack; the example's ops receiver ─▶ another loopback Slack.
 *
 * While the pipeline is down, someone still hears it: AlertPipelineDown goes from Alertmanager straight
 * to the ops receiver. A backlog that ends meanwhile, whose resolve the pipeline never got (Alertmanager's
 * webhooks go through a relay that stays cut while the pipeline starts again), is announced resolved at
 * start, because Prometheus says it is over; the one still firing is left. When the relay is restored
 * and Alertmanager delivers the resolve itself, the pipeline sends nothing more. Waits are bounded polls.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireBinaries } from '../helpers/binaries.js';
import { startLoopback, type Loopback } from '../helpers/loopback.js';
import { startRelay, type Relay } from '../helpers/relay.js';
import { startPipelineProcess, type PipelineProcess } from '../helpers/pipeline-process.js';
import {
  freePort,
  pollUntil,
  SHIPPED,
  startAlertmanager,
  startPrometheus,
  writeFastRules,
  type RunningProcess,
} from '../helpers/processes.js';
import { startVllmSim, type VllmSim } from '../helpers/vllm-sim.js';

const POLL = { deadlineMs: 60_000, intervalMs: 200 };
const PIPELINE_RULES = SHIPPED.rules.replace('vllm-rules.yml', 'pipeline-rules.yml');

let sim: VllmSim;
let slack: Loopback;
let ops: Loopback;
let prometheus: RunningProcess;
let alertmanager: RunningProcess;
let relay: Relay;
let pipelinePort: number;
let dataDir: string;
const pipelines: PipelineProcess[] = [];

const startPipeline = async () => {
  const p = await startPipelineProcess({
    PORT: String(pipelinePort),
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    PROMETHEUS_URL: prometheus.url,
    SLACK_WEBHOOK_URL: `${slack.url}/services/T0/B0/main`,
  });
  pipelines.push(p);
  return p;
};

/** The main Slack's messages about the backlog, as `FIRING model` / `RESOLVED model`. */
const backlog = () =>
  slack.requests
    .map((r) => (JSON.parse(r.body.toString('utf8')) as { text: string }).text)
    .filter((t) => t.includes('VLLMQueueBacklog'))
    .map((t) => `${/^\S+ (\w+)/u.exec(t)?.[1]} ${/model-[ab]/.exec(t)?.[0]}`);
const opsSaid = () => ops.requests.map((r) => r.body.toString('utf8'));
const context = () =>
  `slack: ${JSON.stringify(backlog())}\nops: ${opsSaid().length}\n` +
  pipelines.map((p, i) => `pipeline ${i + 1}:\n${p.out().slice(-3000)}`).join('\n') +
  `\nalertmanager:\n${alertmanager.output().slice(-1500)}`;

/** Whether Prometheus's ALERTS has the backlog of `model` firing now. */
async function firingInPrometheus(model: string): Promise<boolean> {
  const query = `ALERTS{alertname="VLLMQueueBacklog",alertstate="firing",model_name="${model}"}`;
  const res = await fetch(`${prometheus.url}/api/v1/query?${new URLSearchParams({ query })}`);
  return ((await res.json()) as { data: { result: unknown[] } }).data.result.length > 0;
}

/** How many backlog alerts Alertmanager holds that `pipeline` has a record of (its audit route). */
async function recorded(pipeline: PipelineProcess): Promise<number> {
  const filter = new URLSearchParams({ filter: 'alertname="VLLMQueueBacklog"' });
  const listed = (await (await fetch(`${alertmanager.url}/api/v2/alerts?${filter}`)).json()) as {
    fingerprint: string;
  }[];
  const found = await Promise.all(
    listed.map(async (a) => (await fetch(`${pipeline.url}/v1/alerts/${a.fingerprint}`)).status === 200),
  );
  return found.filter(Boolean).length;
}

beforeAll(async () => {
  requireBinaries();
  dataDir = await mkdtemp(join(tmpdir(), 'pipeline-down-'));
  sim = await startVllmSim();
  sim.set('model-a', { requestsWaiting: 80, requestsRunning: 12 });
  sim.set('model-b', { requestsWaiting: 80, requestsRunning: 12 });
  [slack, ops] = await Promise.all([startLoopback(), startLoopback()]);
  pipelinePort = await freePort();
  relay = await startRelay(() => `http://127.0.0.1:${pipelinePort}`);
  alertmanager = await startAlertmanager({
    webhookUrl: `${relay.url}/v1/alertmanager`,
    opsSlackUrl: `${ops.url}/services/T0/B0/ops`,
  });
  const rules = [await writeFastRules(dataDir), await writeFastRules(dataDir, PIPELINE_RULES)];
  prometheus = await startPrometheus({
    scrapeTargets: [sim.url],
    moreJobs: [{ jobName: 'llm-alert-pipeline', targets: [`127.0.0.1:${pipelinePort}`] }],
    rulesFiles: rules,
    alertmanagerUrl: alertmanager.url,
  });
}, 120_000);

afterAll(async () => {
  await Promise.allSettled(pipelines.map((p) => p.kill()));
  await Promise.allSettled([prometheus?.stop(), alertmanager?.stop()]);
  await Promise.allSettled([sim?.close(), slack?.close(), ops?.close(), relay?.close()]);
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('the pipeline down', () => {
  it('is heard through the ops receiver, and on restart announces the resolve it missed, once', async () => {
    const first = await startPipeline();
    await pollUntil(async () => (backlog().length === 2 ? true : undefined), context, POLL);
    expect(backlog().sort()).toEqual(['FIRING model-a', 'FIRING model-b']);
    // Killed once both alerts' records are written (after their delivery), not in between.
    await pollUntil(async () => ((await recorded(first)) === 2 ? true : undefined), context, POLL);

    await first.kill();
    await pollUntil(
      async () => (opsSaid().some((b) => b.includes('AlertPipelineDown')) ? true : undefined),
      context,
      POLL,
    );

    // The backlog of model-a ends while nothing can deliver its resolve to the pipeline.
    sim.set('model-a', { requestsWaiting: 0 });
    await pollUntil(async () => ((await firingInPrometheus('model-a')) ? undefined : true), context, POLL);
    relay.cut = true;

    const second = await startPipeline();
    const caughtUp = await pollUntil(
      async () => second.logs.find((l) => l.event === 'resolves caught up'),
      context,
      POLL,
    );
    expect(caughtUp, context()).toMatchObject({ firing: 2, resolved: 1, stillFiring: 1, unknown: 0, failed: 0 });
    expect(backlog()).toHaveLength(3);
    expect(backlog()[2]).toBe('RESOLVED model-a');

    // Alertmanager's path restored: it delivers the resolve it kept retrying, and nothing more goes out.
    relay.cut = false;
    const delivered = () =>
      second.logs.filter(
        (l) => l.event === 'alert deduped' && l.status === 'resolved' && l.alertname === 'VLLMQueueBacklog',
      );
    await pollUntil(async () => (delivered().length === 2 ? true : undefined), context, POLL);
    // The catch-up's resolve, then Alertmanager's.
    expect(delivered().map((l) => l.decision)).toEqual(['first notification', 'already notified']);
    expect(backlog()).toHaveLength(3);
    // The pipeline's own alert never went through the pipeline.
    expect(second.logs.some((l) => JSON.stringify(l).includes('AlertPipelineDown'))).toBe(false);
  }, 240_000);
});
