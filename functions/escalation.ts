/**
 * AWS Lambda entry of the escalation check, invoked by the one-time EventBridge Scheduler schedule
 * the receiver creates per critical alert, with `{fingerprint, startsAt}` as input. Scheduler invokes
 * asynchronously, so a thrown error gets Lambda's async retries (2), then lands in the stack's
 * failed-checks queue; the check hands its claim back first, so a retry can send. Every line an
 * invocation logs carries its `awsRequestId`.
 */
import type { Context } from 'aws-lambda';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { checkEscalation } from '../shared/escalation/escalation.js';
import { createAckRuntime } from '../shared/runtime/ack.js';
import { createChannels } from '../shared/runtime/deps.js';
import { snsClientsByRegion } from '../shared/runtime/channels.js';
import { channelsReady } from '../shared/channels/deferred.js';
import { emfMetrics } from '../shared/metrics/emf.js';
import { parseEscalationJob } from '../shared/escalation/scheduler.js';
import { loadConfigWhenReady } from '../shared/runtime/config.js';
import { createLogger, withLogFields } from '../shared/core/logger.js';
import { withSecretSettings } from '../shared/runtime/settings-secret.js';
import { AWS_CLIENT_DEFAULTS } from '../shared/runtime/aws-clients.js';
import { mapStackTraces } from '../shared/runtime/stack-traces.js';

// Stack traces name the TypeScript sources; the source map is read on the first trace, not at cold init.
mapStackTraces(import.meta.url);

const config = await loadConfigWhenReady(
  await withSecretSettings(process.env, new SecretsManagerClient(AWS_CLIENT_DEFAULTS)),
);
const logger = createLogger(config.logLevel);
for (const warning of config.warnings) logger.warn('setting adjusted', { ...warning });
const dynamodb = new DynamoDBClient(AWS_CLIENT_DEFAULTS);
const sns = snsClientsByRegion();
// The receiver's channels, as it builds them: `ESCALATION_CHANNELS` names some, and the threads it keeps
// (a Slack or Feishu app's) get the escalation as a reply.
const channels = createChannels(config, { dynamodb, sns }, logger);
await channelsReady(channels);
// Each target's outcome as an EMF metric: a target that failed beside one that accepted reaches the alarm.
const metrics = emfMetrics();
const clients = { dynamodb, sns, inProcessTimers: false, metrics };
const { escalation } = createAckRuntime(config, clients, channels, { logger });

export async function handler(
  event: unknown,
  context?: Pick<Context, 'awsRequestId'>,
): Promise<{ outcome: 'escalated' | 'skipped' }> {
  if (!escalation)
    throw new Error(
      'no escalation target configured (ESCALATION_SNS_TOPIC_ARN, ESCALATION_SLACK_WEBHOOK_URL or ESCALATION_CHANNELS)',
    );
  return withLogFields({ awsRequestId: context?.awsRequestId }, async () => ({
    outcome: await checkEscalation(parseEscalationJob(event), escalation),
  }));
}
