/**
 * AWS Lambda entry: HTTP requests from the Function URL go to the same app as `npm start`, served
 * by `hono/aws-lambda`; SNS events (Amazon Managed Service for Prometheus publishing to a subscribed
 * topic) go through the same pipeline (`shared/amp`; a thrown error makes Lambda retry the event); the
 * heartbeat schedule's event ({@link HEARTBEAT_CHECK_EVENT}) runs the dead-man's switch check; a kept
 * follow-up's schedule (`{followUp}`) runs its next try; an alert set's step (`{ackSetStep}`) runs that
 * step. Configuration is read and validated once, at cold start; the webhook tokens are re-read from the
 * settings secret every minute. Metrics go to CloudWatch as EMF lines.
 * Every line an invocation logs carries its `awsRequestId` (Lambda's text log format does not add
 * it to lines written to stdout).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { handle } from 'hono/aws-lambda';
import type { SNSEvent } from 'aws-lambda';
import { isSnsEvent } from '../shared/amp/is-sns-event.js';
import { createApp } from '../shared/http/app.js';
import { loadConfigWhenReady } from '../shared/runtime/config.js';
import { isHeartbeatCheck, type HEARTBEAT_CHECK_EVENT } from '../shared/heartbeat/event.js';
import { isAckSetStep } from '../shared/ack/set-step-event.js';
import { isFollowUpEvent } from '../shared/ack/follow-up-event.js';
import { createLogger, withSequentialLogFields } from '../shared/core/logger.js';
import { emfMetrics } from '../shared/metrics/emf.js';
import { createDeps, createHeartbeatCheck } from '../shared/runtime/deps.js';
import { unqualifiedFunctionArn } from '../shared/runtime/follow-ups.js';
import { channelsReady } from '../shared/channels/deferred.js';
import { secretTokenSource, withSecretSettings } from '../shared/runtime/settings-secret.js';
import { AWS_CLIENT_DEFAULTS } from '../shared/runtime/aws-clients.js';
import { mapStackTraces } from '../shared/runtime/stack-traces.js';

// Stack traces name the TypeScript sources; the source map is read on the first trace, not at cold init.
mapStackTraces(import.meta.url);

const secrets = new SecretsManagerClient(AWS_CLIENT_DEFAULTS);
const config = await loadConfigWhenReady(await withSecretSettings(process.env, secrets));
const logger = createLogger(config.logLevel);
for (const warning of config.warnings) logger.warn('setting adjusted', { ...warning });
/** This function's name and ARN, from the invocation's context: alert set steps and kept follow-ups invoke it. */
let functionName = '';
let invokedFunctionArn: string | undefined;
const clients = {
  dynamodb: new DynamoDBClient(AWS_CLIENT_DEFAULTS),
  inProcessTimers: false,
  metrics: emfMetrics(),
  // An alert set's acknowledgement continues in asynchronous invocations of this function, step by step.
  ackSetSteps: { functionName: () => functionName },
  // A follow-up a platform refused for now is tried again by a one-time schedule invoking this function.
  functionArn: () => unqualifiedFunctionArn(invokedFunctionArn),
};
const deps = createDeps(config, clients, logger);
// Channels whose code loads apart (PagerDuty) load now when configured: not in the first webhook.
await channelsReady(deps.channels);
const tokens = { current: config.webhookToken, previous: config.webhookTokenPrevious };
if (process.env.SETTINGS_SECRET_ARN)
  deps.webhookTokens = secretTokenSource(process.env.SETTINGS_SECRET_ARN, secrets, tokens, { logger });
if (!config.webhookToken && !config.allowUnauthenticated)
  logger.error('no WEBHOOK_TOKEN', {
    detail:
      'every webhook is refused with 503 until WEBHOOK_TOKEN is in the settings secret (or ALLOW_UNAUTHENTICATED=true)',
  });
const http = handle(createApp(config, deps));
const checkHeartbeats = createHeartbeatCheck(config, deps, clients);

/** One step of an alert set's acknowledgement (`shared/ack/set-job.ts`), its code loaded on the first. */
async function runAckSetStep(jobId: string): Promise<'more' | 'done' | 'off'> {
  const setJobs = deps.ackPage?.setJobs;
  if (!setJobs) return 'off';
  return (await import('../shared/http/off-webhook.js')).runStepThenDispatch(jobId, setJobs.deps());
}

export async function handler(
  event:
    | Parameters<typeof http>[0]
    | SNSEvent
    | typeof HEARTBEAT_CHECK_EVENT
    | { ackSetStep: string }
    | { followUp: string },
  context?: Parameters<typeof http>[1],
) {
  // One invocation at a time per execution environment: no AsyncLocalStorage (shared/core/logger.ts says why).
  functionName = context?.functionName ?? functionName;
  invokedFunctionArn = context?.invokedFunctionArn ?? invokedFunctionArn;
  return withSequentialLogFields({ awsRequestId: context?.awsRequestId }, async () => {
    if (isHeartbeatCheck(event)) return { heartbeats: (await checkHeartbeats?.()) ?? 'off' };
    if (isAckSetStep(event)) return { ackSetStep: await runAckSetStep(event.ackSetStep) };
    if (isFollowUpEvent(event)) return { followUp: (await deps.runFollowUp?.(event.followUp)) ?? 'off' };
    // Loaded on the first SNS event: a Function URL-only deployment never needs it at cold init.
    if (isSnsEvent(event))
      return { amp: await (await import('../shared/amp/receive.js')).receiveSnsEvent(event, deps) };
    return http(event as Parameters<typeof http>[0], context);
  });
}
