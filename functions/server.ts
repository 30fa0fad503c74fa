/**
 * `npm start`: the same app on Node, with an embedded DynamoDB (dynalite) unless
 * `AWS_ENDPOINT_URL_DYNAMODB` or `TABLE_NAME` point at a real one.
 */
import { createApp } from '../shared/app.js';
import { ConfigError, loadConfig, type Config } from '../shared/config.js';
import { serveApp } from '../shared/http-server.js';
import { createLogger } from '../shared/logger.js';
import { openDedupeTable } from '../shared/local-runtime.js';
import { createDeps } from '../shared/runtime.js';

function fail(message: string): never {
  process.stderr.write(`llm-alert-pipeline: ${message}\n`);
  process.exit(1);
}

let config: Config;
try {
  config = loadConfig(process.env);
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  fail(err.message);
}
const host = process.env.HOST || '0.0.0.0';
const logger = createLogger(config.logLevel);
for (const warning of config.warnings) logger.warn('setting adjusted', { ...warning });
const table = await openDedupeTable(config, process.env);
const deps = createDeps(config, { dynamodb: table.client }, logger);
// In-process escalation timers end with a process: arm them again from the table (overdue ones run now).
await deps.resumeEscalations().catch((error: Error) => logger.error('escalations not resumed', { error }));
const server = serveApp(createApp(config, deps), { port: config.port, hostname: host }, (info) => {
  const url = `http://${info.address === '0.0.0.0' || info.address === '::' ? '127.0.0.1' : info.address}:${info.port}`;
  logger.info('listening', {
    url,
    listen: `${info.address}:${info.port}`,
    webhook: `${url}/v1/alertmanager`,
    auth: config.webhookToken ? 'bearer token' : 'none (set WEBHOOK_TOKEN)',
    channels: deps.channels.map((c) => c.name),
    prometheus: config.prometheusUrl ?? 'not set (messages go out not enriched)',
    acknowledge: deps.ackPage ? `${config.publicUrl}/v1/ack/<token>` : 'off (set PUBLIC_URL and ACK_SECRET)',
    escalation: config.escalation ? `after ${config.escalation.delaySeconds} s (${config.escalation.scheduler ? 'EventBridge Scheduler' : 'in-process timer'})` : 'off (set ESCALATION_SLACK_WEBHOOK_URL or ESCALATION_SNS_TOPIC_ARN)',
    dynamodb: table.description,
  });
  if (!config.webhookToken && !['127.0.0.1', '::1', 'localhost'].includes(host)) {
    logger.warn('no WEBHOOK_TOKEN', { detail: `anyone who can reach ${info.address}:${info.port} can post alerts; set WEBHOOK_TOKEN or HOST=127.0.0.1` });
  }
});
server.once('error', (err: NodeJS.ErrnoException) => {
  fail(err.code === 'EADDRINUSE' ? `PORT: ${config.port} is already in use on ${host}` : `HOST/PORT: cannot listen on ${host}:${config.port} (${err.code ?? err.message})`);
});

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    server.close(async () => {
      await table.close();
      process.exit(0);
    });
  });
}
