/**
 * A routing change does not orphan a thread, with the real Alertmanager: alerts pushed to it as
 * Prometheus pushes them (`POST /api/v2/alerts`) ─▶ real Alertmanager (the shipped example, `group_by:
 * [alertname, model_name]`) ─webhook─▶ `npm start`'s entry with the Slack app ─▶ a loopback Slack Web API.
 *
 * Two alerts of one model are announced in one thread. Alertmanager is then reloaded with `group_by:
 * [alertname, instance]`, as an operator would: it regroups both alerts (new group keys, whose firing
 * notifications the pipeline's dedupe absorbs), and each resolve comes under a group key the thread was
 * never opened under. Both resolves update the first message in place and reply in its thread; the
 * channel never gets a second top-level message, and the first message ends Resolved, without its button.
 * Waits are bounded polls. Missing binaries fail this suite (see test/helpers/binaries.ts); it never skips.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  pushAlerts,
  startAlertmanagerAndPipeline,
  type AlertmanagerAndPipeline,
} from '../helpers/alertmanager-pipeline.js';
import type { PipelineProcess } from '../helpers/pipeline-process.js';
import { pollUntil, type RunningAlertmanager } from '../helpers/processes.js';
import { startFakeSlackApi, type FakeSlackApi } from '../helpers/slack-api.js';

const STEP_TIMEOUT_MS = 60_000;
const POLL = { deadlineMs: 30_000, intervalMs: 100 };
/**
 * The alerts' start, set as the first is pushed: a start older than `group_wait` makes Alertmanager flush
 * the group at once, before the other alerts of the same push have joined it.
 */
let startsAt: string | undefined;

let slack: FakeSlackApi;
let stack: AlertmanagerAndPipeline;
let pipeline: PipelineProcess;
let alertmanager: RunningAlertmanager;

const labels = (instance: string) => ({
  alertname: 'VLLMQueueBacklog',
  severity: 'warning',
  kind: 'queue',
  model_name: 'llama-3.1-70b',
  instance,
});

beforeAll(async () => {
  slack = await startFakeSlackApi();
  stack = await startAlertmanagerAndPipeline(() => ({
    SLACK_BOT_TOKEN: 'xoxb-1111-2222-REGROUPtoken',
    SLACK_CHANNEL: 'C0ALERTS01',
    SLACK_API_URL: slack.url,
    PUBLIC_URL: 'https://alerts.example.com',
    ACK_SECRET: 'regroup-ack-secret-0123456789abcdef',
  }));
  ({ alertmanager, pipeline } = stack);
}, 90_000);

afterAll(async () => {
  await stack?.stop();
  await slack?.close();
});

/** Pushes the alerts of `instances` as Prometheus does: firing, or resolved (an `endsAt` in the past). */
async function push(instances: string[], resolved = false): Promise<void> {
  await pushAlerts(
    alertmanager.url,
    instances.map((i) => ({
      labels: labels(i),
      annotations: { summary: `queue backlog on ${i}` },
      startsAt: (startsAt ??= new Date().toISOString()),
      ...(resolved && { endsAt: new Date(Date.now() - 1000).toISOString() }),
    })),
  );
}

const calls = () => slack.calls().map((c) => `${c.method} ${c.form.ts ?? ''}|${c.form.thread_ts ?? ''}`);
const context = () =>
  `${JSON.stringify(calls())}\npipeline:\n${pipeline.out().slice(-4000)}\nalertmanager:\n${alertmanager.output().slice(-2000)}`;
const atLeast = (n: number) => async () => (slack.calls().length >= n ? true : undefined);
const stateLine = (i: number) =>
  (slack.calls()[i]!.blocks[1] as unknown as { elements: { text: string }[] }).elements[0]!.text;

describe('Alertmanager reloaded with another group_by (real Alertmanager, npm start, Slack app)', () => {
  it(
    'sends both resolves to the thread that announced the alerts, not to new top-level messages',
    async () => {
      await push(['vllm-0:8000', 'vllm-1:8000']);
      await pollUntil(atLeast(1), context, POLL);
      expect(calls(), context()).toEqual(['chat.postMessage |']);
      expect(slack.calls()[0]!.form.text).toMatch(/FIRING/);

      await alertmanager.reload((route) => {
        route.group_by = ['alertname', 'instance'];
      });
      // The regrouped groups' firing notifications reach the pipeline (absorbed by dedupe).
      await pollUntil(
        async () => (pipeline.logs.filter((l) => l.event === 'group received').length >= 3 ? true : undefined),
        context,
        POLL,
      );

      await push(['vllm-0:8000'], true);
      await pollUntil(atLeast(3), context, POLL);
      const ts = slack.calls().find((c) => c.method === 'chat.update')?.form.ts ?? '(no chat.update)';
      expect(calls(), context()).toEqual(['chat.postMessage |', `chat.update ${ts}|`, `chat.postMessage |${ts}`]);
      expect(stateLine(1)).toMatch(/^🔥 \*Firing\* \(1 alert\)/);

      await push(['vllm-1:8000'], true);
      await pollUntil(atLeast(5), context, POLL);
      expect(calls().slice(3), context()).toEqual([`chat.update ${ts}|`, `chat.postMessage |${ts}`]);
      expect(stateLine(3)).toMatch(/^✅ \*Resolved\*/);
      expect(slack.calls()[3]!.blocks.some((b) => b.type === 'actions')).toBe(false);
      // The resolves came under the new group keys.
      const keys = pipeline.logs.filter((l) => l.event === 'group received').map((l) => l.groupKey);
      expect(keys).toContain('{}:{alertname="VLLMQueueBacklog", instance="vllm-1:8000"}');
    },
    STEP_TIMEOUT_MS,
  );
});
