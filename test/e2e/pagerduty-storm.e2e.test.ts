/**
 * A storm's PagerDuty alert resolves with its last alert, with the real Alertmanager batching the
 * recovery: 60 alerts of one group pushed to it as Prometheus pushes them ─▶ real Alertmanager (the
 * shipped example, `group_by: [alertname, model_name]`) ─webhook─▶ `npm start`'s entry ─▶ the loopback
 * PagerDuty Events API v2 stand-in.
 *
 * The storm is one `trigger` under `group/<hash>`. The recovery is pushed in three parts of 20; each of
 * Alertmanager's notifications then lists the group's alerts still firing beside the newly resolved ones,
 * so the pipeline's PagerDuty message for each carries 20 resolves (not storm-sized). PagerDuty gets no
 * event under a per-alert key it never saw, and the storm's `resolve` once, after the last part.
 * Waits are bounded polls. Missing binaries fail this suite (see test/helpers/binaries.ts); it never skips.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { groupDedupKey } from '../../shared/channels/pagerduty/dedup-key.js';
import {
  pushAlerts,
  startAlertmanagerAndPipeline,
  type AlertmanagerAndPipeline,
} from '../helpers/alertmanager-pipeline.js';
import type { PipelineProcess } from '../helpers/pipeline-process.js';
import { pollUntil, type RunningProcess } from '../helpers/processes.js';
import { startPagerDutyPlatform, type PagerDutyPlatform } from '../integration/channels/platforms.js';

const STEP_TIMEOUT_MS = 90_000;
const POLL = { deadlineMs: 30_000, intervalMs: 100 };
/**
 * The alerts' start, set as the first is pushed: a start older than `group_wait` makes Alertmanager flush
 * the group at once, before the other alerts of the same push have joined it.
 */
let startsAt: string | undefined;
const MODEL = 'llama-3.1-70b';
const GROUP_KEY = `{}:{alertname="VLLMQueueBacklog", model_name="${MODEL}"}`;
const STORM = Array.from({ length: 60 }, (_, i) => `10.0.0.${i}:8000`);

let pd: PagerDutyPlatform;
let stack: AlertmanagerAndPipeline;
let pipeline: PipelineProcess;
let alertmanager: RunningProcess;

beforeAll(async () => {
  pd = await startPagerDutyPlatform();
  stack = await startAlertmanagerAndPipeline(() => ({
    PAGERDUTY_ROUTING_KEY: 'e93facc04764012d7bfb002500d5d1a6',
    PAGERDUTY_EVENTS_URL: pd.url,
  }));
  ({ alertmanager, pipeline } = stack);
}, 90_000);

afterAll(async () => {
  await stack?.stop();
  await pd?.close();
});

/** Pushes the alerts of `instances` as Prometheus does: firing, or resolved (an `endsAt` in the past). */
async function push(instances: string[], resolved = false): Promise<void> {
  await pushAlerts(
    alertmanager.url,
    instances.map((instance) => ({
      labels: { alertname: 'VLLMQueueBacklog', severity: 'warning', kind: 'queue', model_name: MODEL, instance },
      annotations: { summary: `queue backlog on ${instance}` },
      startsAt: (startsAt ??= new Date().toISOString()),
      ...(resolved && { endsAt: new Date(Date.now() - 1000).toISOString() }),
    })),
  );
}

const events = () => pd.accepted.map((e) => `${e.event_action} ${e.dedup_key}`);
/** The resolves the pipeline received from Alertmanager so far (its `alert deduped` lines say each alert's fate). */
const resolvesReceived = () =>
  new Set(
    pipeline.logs
      .filter((l) => l.event === 'alert deduped' && l.status === 'resolved' && l.decision !== 'already notified')
      .map((l) => l.fingerprint),
  ).size;
const context = () =>
  `${JSON.stringify(events())}\npipeline:\n${pipeline.out().slice(-4000)}\nalertmanager:\n${alertmanager.output().slice(-2000)}`;

describe('a 60-alert storm recovering in batches (real Alertmanager, npm start, PagerDuty)', () => {
  it(
    'sends one trigger and, after the last batch, one resolve, both under the storm key',
    async () => {
      const key = groupDedupKey(GROUP_KEY);
      await push(STORM);
      await pollUntil(async () => (pd.accepted.length >= 1 ? true : undefined), context, POLL);
      expect(events(), context()).toEqual([`trigger ${key}`]);

      for (const [i, part] of [STORM.slice(0, 20), STORM.slice(20, 40)].entries()) {
        await push(part, true);
        await pollUntil(async () => (resolvesReceived() >= 20 * (i + 1) ? true : undefined), context, POLL);
      }
      expect(events(), context()).toEqual([`trigger ${key}`]);

      await push(STORM.slice(40), true);
      await pollUntil(async () => (pd.accepted.length >= 2 ? true : undefined), context, POLL);
      expect(events(), context()).toEqual([`trigger ${key}`, `resolve ${key}`]);
      // The pipeline's log lines come through a pipe: the last ones may still be on their way as PagerDuty answers.
      await pollUntil(async () => (resolvesReceived() >= 60 ? true : undefined), context, POLL);
      expect(resolvesReceived()).toBe(60);
      expect(events(), context()).toEqual([`trigger ${key}`, `resolve ${key}`]);
    },
    STEP_TIMEOUT_MS,
  );
});
