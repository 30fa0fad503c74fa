import { describe, expect, it } from 'vitest';
import {
  classifySnsError,
  regionFromTopicArn,
  renderSns,
  SNS_MAX_MESSAGE_BYTES,
  SNS_MAX_SUBJECT_CHARS,
  snsSubject,
} from '../../../../shared/channels/sns/index.js';
import { attributeBytes } from '../../../../shared/channels/sns/message.js';
import { ContentRefusedError } from '../../../../shared/channels/channel.js';
import { renderText } from '../../../../shared/render/text.js';
import { fixtureNotification, manyAlertsNotification } from '../../../helpers/notifications.js';

const TOPIC = 'arn:aws:sns:eu-west-1:123456789012:llm-alerts';

describe('renderSns', () => {
  it('publishes the plain text with subject and attributes', () => {
    const n = fixtureNotification('firing-queue-backlog-two-models');
    expect(renderSns(n, TOPIC)).toEqual({
      TopicArn: TOPIC,
      Subject: '[FIRING:2] VLLMQueueBacklog warning',
      Message: renderText(n),
      MessageAttributes: {
        severity: { DataType: 'String', StringValue: 'warning' },
        alertname: { DataType: 'String', StringValue: 'VLLMQueueBacklog' },
        status: { DataType: 'String', StringValue: 'firing' },
      },
    });
  });

  it('spells links out in the message', () => {
    const { Message } = renderSns(fixtureNotification('firing-queue-backlog-two-models'), TOPIC);
    expect(Message).toContain('\nRunbook: https://runbooks.example.com/vllm/queue-backlog\n');
    expect(Message).toContain(
      '\nGraph: http://prometheus.example.com:9090/graph?g0.expr=sum+by+%28model_name%29+%28vllm%3Anum_requests_waiting%29+%3E+50&g0.tab=1\n',
    );
  });

  it('leaves out empty attributes, which SNS rejects', () => {
    const n = fixtureNotification('firing-kv-cache-critical');
    delete n.commonLabels.severity;
    delete n.alerts[0]!.labels.severity;
    expect(Object.keys(renderSns(n, TOPIC).MessageAttributes ?? {})).toEqual(['alertname', 'status']);
  });

  it('adds a group id and a content-based deduplication id for FIFO topics', () => {
    const n = fixtureNotification('firing-kv-cache-critical');
    const fifo = renderSns(n, `${TOPIC}.fifo`);
    expect(fifo.MessageGroupId).toMatch(/^[0-9a-f]{64}$/);
    expect(fifo.MessageDeduplicationId).toMatch(/^[0-9a-f]{64}$/);
    expect(renderSns(n, `${TOPIC}.fifo`).MessageDeduplicationId).toBe(fifo.MessageDeduplicationId);
    expect(renderSns(n, TOPIC).MessageGroupId).toBeUndefined();
  });

  it('keeps a huge group under 256 KiB with its attributes and counts the alerts left out (digest off)', () => {
    const n = manyAlertsNotification(400);
    for (const a of n.alerts) a.annotations.description = 'é'.repeat(1000);
    const input = renderSns(n, TOPIC, { digestAbove: 1000 });
    const size = Buffer.byteLength(input.Message ?? '') + attributeBytes(input.MessageAttributes ?? {});
    expect(size).toBeLessThanOrEqual(SNS_MAX_MESSAGE_BYTES);
    expect(size).toBeGreaterThan(SNS_MAX_MESSAGE_BYTES - 4000);
    expect(input.Message).toMatch(/\n\n\+\d+ more alerts$/);
  });
});

describe('snsSubject', () => {
  it('names status, count, alert and severity', () => {
    expect(snsSubject(fixtureNotification('resolved-queue-backlog-two-models'))).toBe(
      '[RESOLVED:2] VLLMQueueBacklog warning',
    );
  });

  it('strips line breaks and non-ASCII, and cuts at 100 characters', () => {
    const n = fixtureNotification('firing-kv-cache-critical');
    n.commonLabels.alertname = `GPU\r\nLeak\t✨ 内存 ${'X'.repeat(200)}`;
    const subject = snsSubject(n);
    expect(subject).toHaveLength(SNS_MAX_SUBJECT_CHARS);
    expect(subject.startsWith('[FIRING:1] GPU Leak XXX')).toBe(true);
    expect(subject).toMatch(/^[\x20-\x7e]+$/);
  });

  it('is never empty, even when the alert name is all non-ASCII', () => {
    const n = fixtureNotification('firing-kv-cache-critical');
    n.commonLabels.alertname = '内存泄漏';
    delete n.commonLabels.severity;
    n.alerts[0]!.labels.severity = '';
    expect(snsSubject(n)).toBe('[FIRING:1]');
  });
});

describe('regionFromTopicArn and classifySnsError', () => {
  it('reads the region of a topic ARN', () => {
    expect(regionFromTopicArn(TOPIC)).toBe('eu-west-1');
    expect(regionFromTopicArn('arn:aws-cn:sns:cn-north-1:123456789012:t')).toBe('cn-north-1');
    expect(() => regionFromTopicArn('not-an-arn')).toThrow(/region/);
  });

  it.each([
    [{ name: 'ThrottledException', $fault: 'client', $metadata: { httpStatusCode: 400 } }, true],
    [{ name: 'InternalErrorException', $fault: 'server', $metadata: { httpStatusCode: 500 } }, true],
    [{ name: 'SNSServiceException', $metadata: { httpStatusCode: 503 } }, true],
    [{ name: 'TimeoutError', code: 'ECONNRESET' }, true],
    [{ name: 'AbortError' }, true],
    [{ name: 'NotFoundException', $fault: 'client', $metadata: { httpStatusCode: 404 } }, false],
    [{ name: 'AuthorizationErrorException', $fault: 'client', $metadata: { httpStatusCode: 403 } }, false],
    [{ name: 'InvalidParameterException', $fault: 'client', $metadata: { httpStatusCode: 400 } }, false],
  ])('%o → retryable %s', (err, retryable) => {
    const mapped = classifySnsError(Object.assign(new Error('m'), err));
    expect(mapped.retryable).toBe(retryable);
    expect(mapped.message).toMatch(new RegExp(`^sns: ${err.name}`));
  });

  it.each([
    ['InvalidParameterException', 'Invalid parameter: Message too long', true],
    ['InvalidParameterException', 'Invalid parameter: Subject', true],
    ['InvalidParameterValueException', 'Invalid parameter: MessageAttributes', true],
    ['InvalidParameterException', 'Invalid parameter: TopicArn', false],
    ['URIError', 'URI malformed', true],
    ['NotFoundException', 'Topic does not exist', false],
  ])('%s "%s" → refusal of the content: %s', (name, message, content) => {
    const mapped = classifySnsError(
      Object.assign(new Error(message), {
        name,
        $fault: 'client',
        $metadata: name === 'URIError' ? undefined : { httpStatusCode: 400 },
      }),
    );
    expect(mapped instanceof ContentRefusedError).toBe(content);
    expect(mapped.retryable).toBe(false);
  });
});
