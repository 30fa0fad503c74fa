/**
 * CDK app entry (`cdk.json` "app"). Settings come from context: `prometheusUrl`, `alertmanagerUrl`,
 * `publicUrl`, `logLevel` (e.g. `npx cdk deploy -c prometheusUrl=https://prom.example.com`), and
 * `routingFile` (e.g. `-c routingFile=infra/routing.yml`, see docs/routing.md), and
 * `escalationDelaySeconds` (turns on escalation of unacknowledged critical alerts to a second topic).
 */
import { App } from 'aws-cdk-lib';
import { escalationFromContext, routingFileFromContext, settingsFromContext } from './context.js';
import { LlmAlertPipelineStack } from './stack.js';

const app = new App();
new LlmAlertPipelineStack(app, 'LlmAlertPipeline', {
  description: 'llm-alert-pipeline: Alertmanager webhook receiver for vLLM fleets',
  settings: settingsFromContext((key) => app.node.tryGetContext(key)),
  routingFile: routingFileFromContext((key) => app.node.tryGetContext(key)),
  escalation: escalationFromContext((key) => app.node.tryGetContext(key)),
});
app.synth();
