/**
 * `npm start`: the same app on Node, with an embedded DynamoDB (dynalite) unless
 * `AWS_ENDPOINT_URL_DYNAMODB` or `TABLE_NAME` point at a real one.
 */
import { serve } from '@hono/node-server';
import { createApp } from '../shared/app.js';
import { ConfigError, loadConfig } from '../shared/config.js';
import { createLogger } from '../shared/logger.js';
import { openDedupeTable } from '../shared/local-runtime.js';
import { createDeps } from '../shared/runtime.js';

let config;
try {
  config = loadConfig(process.env);
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  process.stderr.write(`llm-alert-pipeline: ${err.message}\n`);
  process.exit(1);
}
const logger = createLogger(config.logLevel);
const table = await openDedupeTable(config, process.env);
const deps = createDeps(config, { dynamodb: table.client }, logger);
const server = serve({ fetch: createApp(config, deps).fetch, port: config.port, hostname: process.env.HOST ?? '0.0.0.0' }, (info) => {
  const url = `http://${info.address === '0.0.0.0' ? '127.0.0.1' : info.address}:${info.port}`;
  logger.info('listening', {
    url,
    webhook: `${url}/v1/alertmanager`,
    auth: config.webhookToken ? 'bearer token' : 'none (set WEBHOOK_TOKEN)',
    channels: deps.channels.map((c) => c.name),
    prometheus: config.prometheusUrl ?? 'not set (messages go out not enriched)',
    dynamodb: table.description,
  });
});

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    server.close(async () => {
      await table.close();
      process.exit(0);
    });
  });
}
