import { SNSClient } from '@aws-sdk/client-sns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSnsChannel } from '../../../shared/channels/sns/index.js';
import { renderText } from '../../../shared/render/text.js';
import { DeliveryError } from '../../../shared/channels/channel.js';
import { startLoopback } from '../../helpers/loopback.js';
import { startSnsServer, type SnsStandIn } from '../../helpers/sns-server.js';
import { fixtureNotification } from '../../helpers/notifications.js';

const TOPIC = 'arn:aws:sns:us-east-1:123456789012:llm-alerts';

const client = (endpoint: string) =>
  new SNSClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    maxAttempts: 1,
  });

describe('sns channel through the real AWS SDK', () => {
  let sns: SnsStandIn;
  let channel: ReturnType<typeof createSnsChannel>;
  beforeAll(async () => {
    sns = await startSnsServer();
    channel = createSnsChannel({ client: client(sns.endpoint), topicArn: TOPIC });
  });
  afterAll(() => sns.close());

  const failure = async () => {
    const err = await channel
      .send(fixtureNotification('firing-kv-cache-critical'), AbortSignal.timeout(5000))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DeliveryError);
    return err as DeliveryError;
  };

  it('publishes topic, subject, plain-text message and attributes as SNS decodes them', async () => {
    const n = fixtureNotification('firing-queue-backlog-two-models');
    await channel.send(n, AbortSignal.timeout(5000));
    const publish = sns.publishes.at(-1)!;
    expect(publish.params.Action).toBe('Publish');
    expect(publish.TopicArn).toBe(TOPIC);
    expect(publish.Subject).toBe('[FIRING:2] VLLMQueueBacklog warning');
    expect(publish.Message).toBe(renderText(n));
    expect(publish.Message).toContain('🔥 qwen3-8b: 80 requests waiting\n');
    expect(publish.Message).toContain('Waiting requests: 85 · TTFT p95: no data (NaN)\n');
    expect(publish.Message).toContain('1 signal not exposed by this server: Running requests');
    expect(publish.MessageAttributes).toEqual({
      severity: { DataType: 'String', StringValue: 'warning' },
      alertname: { DataType: 'String', StringValue: 'VLLMQueueBacklog' },
      status: { DataType: 'String', StringValue: 'firing' },
    });
    expect(publish.MessageGroupId).toBeUndefined();
  });

  it('omits an empty severity, which SNS would reject', async () => {
    const n = fixtureNotification('resolved-queue-backlog-two-models');
    delete n.commonLabels.severity;
    for (const a of n.alerts) delete a.labels.severity;
    await channel.send(n, AbortSignal.timeout(5000));
    const publish = sns.publishes.at(-1)!;
    expect(publish.Subject).toBe('[RESOLVED:2] VLLMQueueBacklog');
    expect(Object.keys(publish.MessageAttributes)).toEqual(['alertname', 'status']);
  });

  it('maps throttling (Throttled, 429) to a retryable error', async () => {
    sns.failNext({ status: 429, code: 'Throttled', message: 'Rate exceeded' });
    const err = await failure();
    expect(err).toMatchObject({ retryable: true, message: 'sns: ThrottledException (HTTP 429): Rate exceeded' });
  });

  it('maps an internal error (500) to a retryable error', async () => {
    sns.failNext({ status: 500, code: 'InternalError', message: 'Internal Error' });
    expect((await failure()).retryable).toBe(true);
  });

  it.each([
    [404, 'NotFound', 'Topic does not exist', 'NotFoundException'],
    [403, 'AuthorizationError', 'User is not authorized to perform SNS:Publish', 'AuthorizationErrorException'],
    [400, 'InvalidParameter', 'Invalid parameter: Subject', 'InvalidParameterException'],
  ])('maps %i %s to a permanent error', async (status, code, message, name) => {
    sns.failNext({ status, code, message });
    const err = await failure();
    expect(err).toMatchObject({ retryable: false, message: `sns: ${name} (HTTP ${status}): ${message}` });
  });

  it('maps a time-out to a retryable error', async () => {
    const silent = await startLoopback({ hang: true });
    const slow = createSnsChannel({ client: client(silent.url), topicArn: TOPIC });
    const err = await slow
      .send(fixtureNotification('firing-kv-cache-critical'), AbortSignal.timeout(300))
      .catch((e: unknown) => e);
    await silent.close();
    expect(err).toBeInstanceOf(DeliveryError);
    expect((err as DeliveryError).retryable).toBe(true);
  });

  it('maps a refused connection to a retryable error', async () => {
    const closed = await startLoopback();
    await closed.close();
    const offline = createSnsChannel({ client: client(closed.url), topicArn: TOPIC });
    const err = await offline
      .send(fixtureNotification('firing-kv-cache-critical'), AbortSignal.timeout(5000))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DeliveryError);
    expect((err as DeliveryError).retryable).toBe(true);
  });
});
