/**
 * The dead-man's switch with an Alertmanager HA pair, real parts only: the shipped Watchdog rule in a
 * real Prometheus that notifies both peers ─▶ two clustered Alertmanager peers (gossip on loopback, the
 * shipped example config) ─webhook─▶ `npm start`'s entry (HEARTBEAT_TIMEOUT_SECONDS=12) ─▶ a loopback
 * Slack. Only one peer of a cluster sends a group's notification (the other finds it in the gossiped
 * notification log), so the passive peer's own heartbeat stops although the cluster is healthy: that
 * must raise nothing. Both stopped must raise one AlertingPipelineHeartbeatMissing; either peer back
 * must resolve it. Waits are bounded polls; "nothing happens" is observed over two timeouts after a
 * failover (the sender stopped, the other peer took over, the first one back and now silent).
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

const TOKEN = 'heartbeat-ha-e2e-token-0123456789';
const PIPELINE_RULES = SHIPPED.rules.replace('vllm-rules.yml', 'pipeline-rules.yml');
const TIMEOUT_S = 12;
const STEP_TIMEOUT_MS = 120_000;

interface Peer {
  port: number;
  gossipPort: number;
  process?: RunningProcess;
}

let slack: Loopback;
let pipeline: PipelineProcess;
let prometheus: RunningProcess;
let peers: [Peer, Peer];
let webhookUrl: string;

async function startPeer(peer: Peer): Promise<void> {
  const other = peers.find((p) => p !== peer)!;
  peer.process = await startAlertmanager({
    webhookUrl,
    bearerToken: TOKEN,
    groupWait: '1s',
    groupInterval: '2s',
    repeatInterval: '3s',
    port: peer.port,
    cluster: { port: peer.gossipPort, peerPorts: [other.gossipPort] },
  });
}

beforeAll(async () => {
  requireBinaries();
  slack = await startLoopback();
  const port = await freePort();
  webhookUrl = `http://127.0.0.1:${port}/v1/alertmanager`;
  peers = [
    { port: await freePort(), gossipPort: await freePort() },
    { port: await freePort(), gossipPort: await freePort() },
  ];
  pipeline = await startPipelineProcess({
    PORT: String(port),
    HOST: '127.0.0.1',
    WEBHOOK_TOKEN: TOKEN,
    SLACK_WEBHOOK_URL: `${slack.url}/services/T000/B000/heartbeat-ha`,
    HEARTBEAT_TIMEOUT_SECONDS: String(TIMEOUT_S),
  });
  await Promise.all(peers.map(startPeer));
  prometheus = await startPrometheus({
    scrapeTargets: peers.map((p) => `127.0.0.1:${p.port}`),
    jobName: 'alertmanager',
    rulesFiles: [PIPELINE_RULES],
    alertmanagerUrls: peers.map((p) => `http://127.0.0.1:${p.port}`),
  });
}, 120_000);

afterAll(async () => {
  await Promise.allSettled([prometheus?.stop(), ...(peers ?? []).map((p) => p.process?.stop()), pipeline?.stop()]);
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

/** `heartbeat_last_seen_timestamp_seconds` per peer port, Unix seconds; a peer never seen is absent. */
async function lastSeenByPort(): Promise<Map<number, number>> {
  const seen = new Map<number, number>();
  for (const [, port, value] of (await metrics()).matchAll(
    /llm_alert_pipeline_heartbeat_last_seen_timestamp_seconds\{alertmanager="[^"]*:(\d+)\/?"\} (\S+)/g,
  ))
    seen.set(Number(port), Number(value));
  return seen;
}

const slackTexts = () => slack.requests.map((r) => (JSON.parse(r.body.toString('utf8')) as { text: string }).text);
const anyMissing = (text: string) => /llm_alert_pipeline_heartbeat_missing\{alertmanager="[^"]*"\} 1/.exec(text)?.[0];
const peerOutputs = () => peers.map((p, i) => `alertmanager ${i}:\n${p.process?.output().slice(-1500)}`).join('\n');
const context = () =>
  `slack: ${JSON.stringify(slackTexts())}\npipeline:\n${pipeline.out().slice(-4000)}\n${peerOutputs()}`;

/** Fails as soon as a missing heartbeat shows (gauge or Slack) during `windowMs`. */
async function observeNothingMissing(windowMs: number): Promise<void> {
  const until = Date.now() + windowMs;
  while (Date.now() < until) {
    expect(anyMissing(await metrics()), context()).toBeUndefined();
    expect(slackTexts()).toEqual([]);
    await new Promise((r) => setTimeout(r, 500));
  }
}

describe('Watchdog → Alertmanager HA pair → pipeline', () => {
  it(
    'raises nothing while both peers run, across a failover, although only one of them sends the heartbeat',
    async () => {
      const first = await pollUntil(async () => [...(await lastSeenByPort()).keys()][0], context, {
        deadlineMs: 60_000,
      });
      // Failover: the sender stops, the other peer takes over, the first comes back (now passive, silent).
      const sender = peers.find((p) => p.port === first)!;
      const other = peers.find((p) => p !== sender)!;
      await sender.process!.stop();
      await pollUntil(async () => ((await lastSeenByPort()).has(other.port) ? true : undefined), context, {
        deadlineMs: 60_000,
      });
      await startPeer(sender);
      await observeNothingMissing(2 * TIMEOUT_S * 1000);
      expect(await metrics()).toMatch(/llm_alert_pipeline_heartbeat_missing\{alertmanager=""\} 0/);
    },
    STEP_TIMEOUT_MS,
  );

  it(
    'raises one AlertingPipelineHeartbeatMissing for the cluster when both peers stop',
    async () => {
      await Promise.all(peers.map((p) => p.process?.stop()));
      await pollUntil(async () => (slack.requests.length ? true : undefined), context, { deadlineMs: 60_000 });
      const [text] = slackTexts();
      expect(text).toMatch(/FIRING/);
      expect(text).toContain('AlertingPipelineHeartbeatMissing');
      await pollUntil(
        async () =>
          /llm_alert_pipeline_heartbeat_missing\{alertmanager=""\} 1/.test(await metrics()) ? true : undefined,
        context,
      );
    },
    STEP_TIMEOUT_MS,
  );

  it(
    'resolves it when one peer is back, the one that sent least recently',
    async () => {
      const seen = await lastSeenByPort();
      const [back] = [...peers].sort((a, b) => (seen.get(a.port) ?? 0) - (seen.get(b.port) ?? 0));
      await startPeer(back!);
      await pollUntil(async () => (slackTexts().some((t) => /RESOLVED/.test(t)) ? true : undefined), context, {
        deadlineMs: 60_000,
      });
      const texts = slackTexts();
      // One firing message and its resolve: the pair is one cluster, and the Watchdog never reaches Slack.
      expect(texts.map((t) => (/RESOLVED/.test(t) ? 'resolved' : 'firing'))).toEqual(['firing', 'resolved']);
      expect(texts[1]).toContain('AlertingPipelineHeartbeatMissing');
      expect(anyMissing(await metrics()), context()).toBeUndefined();
    },
    STEP_TIMEOUT_MS,
  );
});
