/**
 * CDK app entry (`cdk.json` "app"). Settings come from context: `prometheusUrl`, `alertmanagerUrl`,
 * `publicUrl`, `grafanaUrl`, `logLevel` (e.g. `npx cdk deploy -c prometheusUrl=https://prom.example.com`), and
 * `routingFile` (e.g. `-c routingFile=infra/routing.yml`, see the README, Routing),
 * `escalationDelaySeconds` (turns on escalation of unacknowledged critical alerts to a second topic),
 * `alarmEmail` (subscribed to the ops topic the alarms notify), and `ampTopicArn` / `ampTopic=create`
 * (+ `ampWorkspaceArn`): alerts from Amazon Managed Service for Prometheus through that SNS topic.
 * cdk-nag's packs run on every synth: an unacknowledged finding fails it.
 */
import { App, Validations } from 'aws-cdk-lib';
import { RoutingError } from '../shared/routing/load.js';
import { alarmEmailFromContext, ampFromContext, ContextError, escalationFromContext, routingFileFromContext, settingsFromContext } from './context.js';
import { nagPacks } from './nag.js';
import { LlmAlertPipelineStack } from './stack.js';

const app = new App();
Validations.of(app).addPlugins(...nagPacks());
const context = (key: string) => app.node.tryGetContext(key);
try {
  new LlmAlertPipelineStack(app, 'LlmAlertPipeline', {
    description: 'llm-alert-pipeline: Alertmanager webhook receiver for vLLM fleets',
    settings: settingsFromContext(context),
    routingFile: routingFileFromContext(context),
    escalation: escalationFromContext(context),
    alarmEmail: alarmEmailFromContext(context),
    amp: ampFromContext(context),
  });
} catch (err) {
  // A bad context value or routing file is the user's input, not a bug: print it, not a stack trace.
  if (!(err instanceof ContextError || err instanceof RoutingError)) throw err;
  process.stderr.write(`llm-alert-pipeline: ${err.message}\n`);
  process.exit(1);
}
app.synth();
