/**
 * Storm benchmark: one Alertmanager group of N alerts through the real app (hono, pipeline, ledger
 * on dynalite, the env-var channels Slack, Feishu and SNS pointed at loopback servers, enrichment
 * against a loopback Prometheus answering empty results, as the floor bench's fake does), then the
 * same group again (Alertmanager's retry or an HA peer). Measures wall time of each request and
 * counts the messages each platform received (one digest per channel expected, none on repeat).
 *
 * Run alone: `npx tsx bench/storm.ts [alerts] [truncatedAlerts]`.
 */
import { SNSClient } from '@aws-sdk/client-sns';
import { pathToFileURL } from 'node:url';
import { createApp } from '../shared/http/app.js';
import { loadConfig } from '../shared/runtime/config.js';
import { startLocalDynamoDb } from '../shared/store/local-dynamodb.js';
import type { Logger } from '../shared/core/logger.js';
import { createDeps } from '../shared/runtime/deps.js';
import { startLoopback } from '../test/helpers/loopback.js';
import { startSnsServer } from '../test/helpers/sns-server.js';
import { stormWebhook } from '../test/integration/storm-webhook.js';
import type { Benchmark, Row } from './harness.js';

const EMPTY_VECTOR = '{"status":"success","data":{"resultType":"vector","result":[]}}';
const EMPTY_MATRIX = '{"status":"success","data":{"resultType":"matrix","result":[]}}';

export interface StormBenchResult {
  alerts: number;
  truncatedAlerts: number;
  /** Size of the webhook body, bytes. */
  bodyBytes: number;
  /** First delivery: claims, flap records, fan-out and ledger, milliseconds. */
  firstMs: number;
  /** From the first post until the last of the three digests arrived, milliseconds. */
  digestsMs: number;
  /** CPU time of this process (app and in-process dynalite) during the first post, milliseconds: what load on a shared machine does not inflate. */
  firstCpuMs: number;
  /** The same group again (everything a duplicate), milliseconds. */
  repeatMs: number;
  /**
   * When each stage of the first post ended, milliseconds from the post (from the pipeline's own log
   * events): `received` (parsed), `claimed` (dedupe read and claims), `enriched`, `sent` (the last digest
   * accepted), `answered` (the ledger, records and history written).
   */
  timeline: Record<'received' | 'claimed' | 'enriched' | 'sent' | 'answered', number>;
  /** Messages each platform received over both requests. */
  messages: { slack: number; feishu: number; sns: number };
  /** HTTP status of each request. */
  status: [number, number];
}

/**
 * Runs one storm through the app and reports timings. Starts and stops its own dynalite and
 * loopback servers.
 * @param alerts alerts in the group (default 5,000)
 * @param truncatedAlerts Alertmanager's `truncatedAlerts` (default 1,497)
 */
export async function benchStorm(alerts = 5000, truncatedAlerts = 1497): Promise<StormBenchResult> {
  const db = await startLocalDynamoDb('bench-storm');
  let hookAt = 0;
  const hooks = await startLoopback((r) => {
    hookAt = performance.now();
    return r.path.startsWith('/feishu')
      ? { status: 200, body: '{"code":0,"msg":"success"}' }
      : { status: 200, body: 'ok' };
  });
  const sns = await startSnsServer();
  // Enrichment runs as under `npm start` with PROMETHEUS_URL set: its CPU is a large part of a storm's.
  const prometheus = await startLoopback((r) => ({
    headers: { 'content-type': 'application/json' },
    body: r.path.startsWith('/api/v1/query_range') ? EMPTY_MATRIX : EMPTY_VECTOR,
  }));
  const client = new SNSClient({
    endpoint: sns.endpoint,
    region: 'eu-west-1',
    credentials: { accessKeyId: 'b', secretAccessKey: 'b' },
    maxAttempts: 1,
  });
  try {
    const config = loadConfig({
      // In-process requests carry no token: serve them (the fail-closed default answers 503).
      ALLOW_UNAUTHENTICATED: 'true',
      SLACK_WEBHOOK_URL: `${hooks.url}/slack/hook`,
      FEISHU_WEBHOOK_URL: `${hooks.url}/feishu/hook`,
      SNS_TOPIC_ARN: 'arn:aws:sns:eu-west-1:123456789012:bench',
      TABLE_NAME: 'bench-storm',
      PROMETHEUS_URL: prometheus.url,
    });
    const stages = stageClock();
    const app = createApp(config, createDeps(config, { dynamodb: db.client, sns: client }, stages.logger));
    const body = JSON.stringify(stormWebhook(alerts, truncatedAlerts));
    const post = async () => {
      const started = performance.now();
      const res = await app.request('/v1/alertmanager', {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json' },
      });
      await res.arrayBuffer();
      return { ms: performance.now() - started, status: res.status };
    };
    let snsAt = 0;
    const started = performance.now();
    const cpu = process.cpuUsage();
    const poll = setInterval(() => void (sns.publishes.length && !snsAt && (snsAt = performance.now())), 2);
    stages.start();
    const first = await post();
    clearInterval(poll);
    const timeline = { ...stages.stop(), answered: Math.round(first.ms) };
    const digestsMs = Math.max(hookAt, snsAt) - started;
    const used = process.cpuUsage(cpu);
    const firstCpuMs = (used.user + used.system) / 1000;
    const repeat = await post();
    const slack = hooks.requests.filter((r) => r.path.startsWith('/slack')).length;
    return {
      alerts,
      truncatedAlerts,
      bodyBytes: Buffer.byteLength(body),
      firstMs: Math.round(first.ms),
      digestsMs: Math.round(digestsMs),
      firstCpuMs: Math.round(firstCpuMs),
      repeatMs: Math.round(repeat.ms),
      timeline,
      messages: { slack, feishu: hooks.requests.length - slack, sns: sns.publishes.length },
      status: [first.status, repeat.status],
    };
  } finally {
    client.destroy();
    await Promise.all([hooks.close(), sns.close(), prometheus.close(), db.close()]);
  }
}

/**
 * A logger that writes nothing and notes, once each, when the first post's stages ended: the
 * pipeline's `group received`, `alert storm` or first `alert deduped` (claims done), `group enriched`
 * and last `channel delivered` events.
 */
function stageClock(): { logger: Logger; start(): void; stop(): Omit<StormBenchResult['timeline'], 'answered'> } {
  const at: Partial<Record<string, number>> = {};
  let t0 = 0;
  let on = false;
  const STAGES: Record<string, string> = {
    'group received': 'received',
    'alert storm': 'claimed',
    'alert deduped': 'claimed',
    'group enriched': 'enriched',
    'channel delivered': 'sent',
  };
  const note = (event: string) => {
    const stage = STAGES[event];
    if (!on || !stage || (stage !== 'sent' && at[stage] !== undefined)) return;
    at[stage] = Math.round(performance.now() - t0);
  };
  const logger: Logger = { debug: note, info: note, warn: note, error: note, child: () => logger };
  return {
    logger,
    start: () => {
      t0 = performance.now();
      on = true;
    },
    stop: () => {
      on = false;
      return { received: at.received ?? 0, claimed: at.claimed ?? 0, enriched: at.enriched ?? 0, sent: at.sent ?? 0 };
    },
  };
}

/** Group sizes of the `storm` benchmark; each is one run (a 5,000-alert run takes most of a minute on dynalite). */
const STORM_SIZES = [100, 1000, 5000] as const;

export const storm: Benchmark = {
  name: 'storm',
  description:
    'one group of N alerts through the real app (dynalite ledger, loopback Slack/Feishu/SNS), then the same group again; one run per size, so read ratios, not single numbers',
  run: async () => {
    const rows: Row[] = [];
    let base: StormBenchResult | undefined;
    for (const size of STORM_SIZES) {
      const r = await benchStorm(size, 0);
      base ??= r;
      rows.push({
        alerts: r.alerts,
        'first ms': r.firstMs,
        'digests ms': r.digestsMs,
        'repeat ms': r.repeatMs,
        'first ms per alert': Math.round((r.firstMs / r.alerts) * 100) / 100,
        'first ratio to 100': Math.round((r.firstMs / base.firstMs) * 10) / 10,
        'received/claimed/enriched/sent/answered ms': Object.values(r.timeline).join('/'),
        'messages slack/feishu/sns': `${r.messages.slack}/${r.messages.feishu}/${r.messages.sns}`,
        status: r.status.join('/'),
      });
    }
    return rows;
  },
};

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [alerts, truncated] = process.argv.slice(2).map(Number);
  process.stdout.write(`${JSON.stringify(await benchStorm(alerts || undefined, truncated ?? undefined))}\n`);
}
