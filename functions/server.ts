/**
 * `npm start`: the same app on Node, with an embedded DynamoDB (dynalite) unless
 * `AWS_ENDPOINT_URL_DYNAMODB` or `TABLE_NAME` point at a real one.
 */
import { createApp } from '../shared/http/app.js';
import { ConfigError, loadConfigWhenReady, type Config } from '../shared/runtime/config.js';
import { drain, serveApp } from '../shared/http/server.js';
import { batchedWriter, createLogger } from '../shared/core/logger.js';
import { openDedupeTable, StartupError } from '../shared/runtime/local.js';
import { prometheusMetrics } from '../shared/metrics/prometheus.js';
import { createDeps, createHeartbeatCheck } from '../shared/runtime/deps.js';
import { createResolveCatchUp } from '../shared/runtime/catch-up.js';
import { channelsReady } from '../shared/channels/deferred.js';
import { mapStackTraces } from '../shared/runtime/stack-traces.js';

// Stack traces name the TypeScript sources; a file's source map is read on its first trace, not at
// start (`node --enable-source-maps` kept every map parsed: ~3 MB of RSS for traces rarely printed).
mapStackTraces(import.meta.url);

function fail(message: string): never {
  process.stderr.write(`llm-alert-pipeline: ${message}\n`);
  process.exit(1);
}

let config: Config;
try {
  config = await loadConfigWhenReady(process.env);
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  fail(err.message);
}
// Without a token, stay on this machine unless told otherwise: beyond loopback the webhook would refuse everything.
const host = process.env.HOST || (config.webhookToken || config.allowUnauthenticated ? '0.0.0.0' : '127.0.0.1');
const loopbackOnly = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/.test(host);
// One write per event-loop turn, not per line (`batchedWriter`). The console channel writes through
// the same batches: written at once, its box came before the log lines of its own group.
const out = batchedWriter();
const logger = createLogger(config.logLevel, out);
for (const warning of config.warnings) logger.warn('setting adjusted', { ...warning });
const table = await openDedupeTable(config, process.env).catch((err: unknown) =>
  err instanceof StartupError ? fail(err.message) : Promise.reject(err),
);
const prom = prometheusMetrics();
const deps = {
  ...createDeps(
    config,
    {
      dynamodb: table.client,
      metrics: prom.metrics,
      workAfterAnswer: true,
      write: (text) => out(text.replace(/\n$/, '')),
    },
    logger,
  ),
  metricsScrape: prom.scrape,
};
prom.startChannels(deps.channels.map((c) => c.name));
// Channels whose code loads apart (PagerDuty) load now when configured: not in the first webhook.
await channelsReady(deps.channels);
// In-process escalation timers end with a process: arm them again from the table (overdue ones run now).
await deps.resumeEscalations().catch((error: Error) => logger.error('escalations not resumed', { error }));
const app = createApp({ ...config, allowUnauthenticated: config.allowUnauthenticated || loopbackOnly }, deps);
const heartbeatTimer = startHeartbeatTimer();
// Resolves missed while no process ran: announced now where Prometheus or Alertmanager says the alert is over.
const catchingUp = createResolveCatchUp(config, deps, { dynamodb: table.client })().catch((error: Error) =>
  logger.error('resolves not caught up', { error }),
);
const server = serveApp(app, { port: config.port, hostname: host }, (info) => {
  const url = `http://${info.address === '0.0.0.0' || info.address === '::' ? '127.0.0.1' : info.address}:${info.port}`;
  logger.info('listening', {
    url,
    listen: `${info.address}:${info.port}`,
    webhook: `${url}/v1/alertmanager`,
    auth: config.webhookToken
      ? 'bearer token'
      : loopbackOnly || config.allowUnauthenticated
        ? 'none (set WEBHOOK_TOKEN)'
        : 'refusing every request (set WEBHOOK_TOKEN)',
    metrics: `${url}/metrics`,
    channels: deps.channels.map((c) => c.name),
    prometheus: config.prometheusUrl ?? 'not set (messages go out not enriched)',
    alertmanager: config.alertmanagerUrl ?? 'not set (no silences from the page, no alert-state checks)',
    ...featureFacts(),
    dynamodb: table.description,
    state: table.state,
  });
  // Wrong app credentials or the wrong domain (a Lark tenant on open.feishu.cn) show now, not at the first alert.
  void deps.checkFeishuApp?.().then((problem) => {
    if (problem) logger.error('feishu app cannot send', { error: problem });
  });
  if (!config.webhookToken && !loopbackOnly) logNoToken(`${info.address}:${info.port}`);
});
server.once('error', (err: NodeJS.ErrnoException) => {
  fail(
    err.code === 'EADDRINUSE'
      ? `PORT: ${config.port} is already in use on ${host}`
      : `HOST/PORT: cannot listen on ${host}:${config.port} (${err.code ?? err.message})`,
  );
});

// SIGTERM (docker stop, systemd) and SIGINT: the groups in flight are delivered and answered, then the store closes.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, async () => {
    if (heartbeatTimer) clearInterval(heartbeatTimer);
    logger.info('stopping', { signal, drainSeconds: DRAIN_DEADLINE_MS / 1000 });
    // A catch-up of resolves still delivering gets the same deadline as the requests in flight.
    const deadline = new Promise((ok) => setTimeout(ok, DRAIN_DEADLINE_MS).unref());
    await Promise.all([drain(server, DRAIN_DEADLINE_MS), Promise.race([catchingUp, deadline])]);
    await table.close();
    logger.info('stopped', { signal });
    process.exit(0);
  });
}

/**
 * Longest wait for the requests in flight on SIGTERM, milliseconds: the 20 s delivery budget of a group
 * and a margin, under the 30 s the container docs give `docker stop` (compose `stop_grace_period`).
 */
const DRAIN_DEADLINE_MS = 25_000;

/** The `listening` line's word on each feature: where it answers, or `off` and the settings it still needs. */
function featureFacts(): Record<string, string> {
  return {
    acknowledge: deps.ackPage
      ? `${config.publicUrl}/v1/ack/<token>`
      : off([!config.publicUrl && 'PUBLIC_URL', !config.ackSecret && 'ACK_SECRET']),
    slackInteractions: deps.slackInteractions
      ? `${config.publicUrl}/v1/slack/interactions`
      : off([
          !config.channelOptions['slack-app']?.signingSecret && 'SLACK_SIGNING_SECRET',
          !config.publicUrl && 'PUBLIC_URL',
          !config.ackSecret && 'ACK_SECRET',
        ]),
    ...(config.channelOptions['feishu-app'] && {
      feishuCallback: deps.feishuCallback
        ? `${config.publicUrl}/v1/feishu/callback${config.channelOptions['feishu-app'].encryptKey ? '' : ' (refusing every callback: set FEISHU_ENCRYPT_KEY)'}`
        : off([!config.publicUrl && 'PUBLIC_URL', !config.ackSecret && 'ACK_SECRET']),
    }),
    escalation: config.escalation
      ? `after ${config.escalation.delaySeconds} s (${config.escalation.scheduler ? 'EventBridge Scheduler' : 'in-process timer'})`
      : 'off (set ESCALATION_CHANNELS or an ESCALATION_*_WEBHOOK_URL / ESCALATION_SNS_TOPIC_ARN target)',
    heartbeat: config.heartbeat
      ? `${config.heartbeat.alertname}, missing after ${config.heartbeat.timeoutSeconds} s`
      : 'off (HEARTBEAT_ALERTNAME="")',
  };
}

/** Listening beyond loopback without `WEBHOOK_TOKEN` (at `listen`, `address:port`): open to anyone, or refusing everything. */
function logNoToken(listen: string): void {
  if (config.allowUnauthenticated)
    logger.warn('no WEBHOOK_TOKEN', {
      detail: `ALLOW_UNAUTHENTICATED=true: anyone who can reach ${listen} can post alerts`,
    });
  else
    logger.error('no WEBHOOK_TOKEN', {
      detail: `listening on ${listen} without a token: every webhook is refused with 503; set WEBHOOK_TOKEN, HOST=127.0.0.1, or ALLOW_UNAUTHENTICATED=true`,
    });
}

/** A feature's start-up state when off: the settings still missing, e.g. `off (set ACK_SECRET)`. */
function off(missing: (string | false | undefined)[]): string {
  const names = missing.filter((name): name is string => Boolean(name));
  return names.length ? `off (set ${names.join(' and ')})` : 'off';
}

/** Checks heartbeats every half timeout (at most every minute), one check at a time. */
function startHeartbeatTimer(): NodeJS.Timeout | undefined {
  const check = createHeartbeatCheck(config, deps, { dynamodb: table.client, metrics: prom.metrics });
  if (!check || !config.heartbeat) return undefined;
  let running = false;
  const everyMs = Math.min(config.heartbeat.timeoutSeconds * 500, 60_000);
  return setInterval(() => {
    if (running) return;
    running = true;
    void check().finally(() => (running = false));
  }, everyMs);
}
