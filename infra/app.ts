/**
 * CDK app entry (`cdk.json` "app"). Settings come from context: `prometheusUrl`, `alertmanagerUrl`,
 * `publicUrl`, `logLevel` (e.g. `npx cdk deploy -c prometheusUrl=https://prom.example.com`), and
 * `routingFile` (e.g. `-c routingFile=infra/routing.yml`, see the README, Routing), and
 * `escalationDelaySeconds` (turns on escalation of unacknowledged critical alerts to a second topic).
 */
import { App } from 'aws-cdk-lib';
import { RoutingError } from '../shared/routing/load.js';
import { ContextError, escalationFromContext, routingFileFromContext, settingsFromContext } from './context.js';
import { LlmAlertPipelineStack } from './stack.js';

const app = new App();
const context = (key: string) => app.node.tryGetContext(key);
try {
  new LlmAlertPipelineStack(app, 'LlmAlertPipeline', {
    description: 'llm-alert-pipeline: Alertmanager webhook receiver for vLLM fleets',
    settings: settingsFromContext(context),
    routingFile: routingFileFromContext(context),
    escalation: escalationFromContext(context),
  });
} catch (err) {
  // A bad context value or routing file is the user's input, not a bug: print it, not a stack trace.
  if (!(err instanceof ContextError || err instanceof RoutingError)) throw err;
  process.stderr.write(`llm-alert-pipeline: ${err.message}\n`);
  process.exit(1);
}
app.synth();
