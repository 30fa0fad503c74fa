/**
 * CDK app entry (`cdk.json` "app"). Settings come from context: `prometheusUrl`, `alertmanagerUrl`,
 * `publicUrl`, `grafanaUrl`, `logLevel` (e.g. `npx cdk deploy -c prometheusUrl=https://prom.example.com`), and
 * `routingFile` (e.g. `-c routingFile=infra/routing.yml`, see docs/routing.md),
 * `escalationDelaySeconds` (turns on escalation of unacknowledged critical alerts to a second topic),
 * `alarmEmail` (subscribed to the ops topic the alarms notify), and `ampTopicArn` / `ampTopic=create`
 * (+ `ampWorkspaceArn`): alerts from Amazon Managed Service for Prometheus through that SNS topic;
 * `ampWorkspaceArn` also makes the receiver query that workspace (SigV4) for enrichment and charts.
 * `pipeline.ts` reads them; cdk-nag's packs run on every synth: an unacknowledged finding fails it.
 */
import { App, Validations } from 'aws-cdk-lib';
import { RoutingError } from '../shared/routing/load.js';
import { ContextError } from './context.js';
import { nagPacks } from './nag.js';
import { definePipeline, RegionError } from './pipeline.js';

const app = new App();
Validations.of(app).addPlugins(...nagPacks());
try {
  // The CLI's target for an environment-agnostic stack: known at synth when a profile or AWS_REGION is set.
  definePipeline(app, { region: process.env.CDK_DEFAULT_REGION, account: process.env.CDK_DEFAULT_ACCOUNT });
} catch (err) {
  // A bad context value, routing file or region is the user's input, not a bug: print it, not a stack trace.
  if (!(err instanceof ContextError || err instanceof RoutingError || err instanceof RegionError)) throw err;
  process.stderr.write(`llm-alert-pipeline: ${err.message}\n`);
  process.exit(1);
}
app.synth();
