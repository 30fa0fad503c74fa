import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../shared/runtime/config.js';

const SECRET = 'a'.repeat(32);
/** Escalation needs acknowledgement links (PUBLIC_URL and ACK_SECRET). */
const ACK_LINKS = { PUBLIC_URL: 'https://alerts.example.com', ACK_SECRET: SECRET };

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe('acknowledgement and escalation settings', () => {
  it('defaults: links live 7 days, no escalation, no previous key', () => {
    const c = loadConfig({});
    expect(c.ackTokenTtlSeconds).toBe(604_800);
    expect(c.escalation).toBeUndefined();
    expect(c.ackPreviousSecret).toBeUndefined();
  });

  it('takes the previous key only with the end of its grace period, and only beside a current key', () => {
    const c = loadConfig({
      ACK_SECRET: SECRET,
      ACK_SECRET_PREVIOUS: 'b'.repeat(32),
      ACK_SECRET_PREVIOUS_UNTIL: '2026-12-01T00:00:00Z',
    });
    expect(c.ackPreviousSecret?.untilMs).toBe(Date.parse('2026-12-01T00:00:00Z'));
    expect(`${c.ackPreviousSecret?.secret}`).toBe('<redacted>');
    expect(problems({ ACK_SECRET: SECRET, ACK_SECRET_PREVIOUS: 'b'.repeat(32) })).toEqual([
      'ACK_SECRET_PREVIOUS_UNTIL: required with ACK_SECRET_PREVIOUS (the end of its grace period)',
    ]);
    expect(
      problems({ ACK_SECRET_PREVIOUS: 'b'.repeat(32), ACK_SECRET_PREVIOUS_UNTIL: '2026-12-01T00:00:00Z' }),
    ).toEqual(['ACK_SECRET_PREVIOUS: set, but ACK_SECRET is not']);
    // The message says how to make one, not only what is wrong.
    expect(problems({ ACK_SECRET: 'too-short' })).toEqual([
      'ACK_SECRET: must be at least 32 characters (e.g. the output of `openssl rand -hex 32`)',
    ]);
    expect(
      problems({ ACK_SECRET: SECRET, ACK_SECRET_PREVIOUS: 'short', ACK_SECRET_PREVIOUS_UNTIL: 'next week' })
        .map((p) => p.split(':')[0])
        .sort(),
    ).toEqual(['ACK_SECRET_PREVIOUS', 'ACK_SECRET_PREVIOUS_UNTIL']);
  });

  it('turns escalation on with a target, and wants the scheduler settings all together', () => {
    const c = loadConfig({
      ...ACK_LINKS,
      ESCALATION_SNS_TOPIC_ARN: 'arn:aws:sns:eu-west-1:123456789012:escalations',
      ESCALATION_DELAY_SECONDS: '120',
    });
    expect(c.escalation).toEqual({
      delaySeconds: 120,
      targets: [{ name: 'escalation-sns', type: 'sns', topicArn: 'arn:aws:sns:eu-west-1:123456789012:escalations' }],
      channels: [],
      scheduler: undefined,
    });
    expect(problems({ ESCALATION_SLACK_WEBHOOK_URL: 'http://hooks.slack.com/x' })[0]).toMatch(
      /^ESCALATION_SLACK_WEBHOOK_URL: must be an https URL/,
    );
    expect(problems({ ESCALATION_SCHEDULE_GROUP: 'g' })).toEqual([
      'ESCALATION_SCHEDULE_GROUP: set ESCALATION_SCHEDULE_GROUP, ESCALATION_FUNCTION_ARN and ESCALATION_ROLE_ARN together, or none',
    ]);
    const wired = loadConfig({
      ...ACK_LINKS,
      ESCALATION_SLACK_WEBHOOK_URL: 'https://hooks.slack.com/services/T/B/x',
      ESCALATION_SCHEDULE_GROUP: 'esc',
      ESCALATION_FUNCTION_ARN: 'arn:aws:lambda:eu-west-1:123456789012:function:check',
      ESCALATION_ROLE_ARN: 'arn:aws:iam::123456789012:role/scheduler',
    });
    expect(wired.escalation?.scheduler).toEqual({
      groupName: 'esc',
      functionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:check',
      roleArn: 'arn:aws:iam::123456789012:role/scheduler',
    });
    expect(wired.escalation?.delaySeconds).toBe(900);
  });

  it("passes the schedules' dead-letter queue on with the scheduler settings, and names a bad ARN", () => {
    const wiring = {
      ...ACK_LINKS,
      ESCALATION_SLACK_WEBHOOK_URL: 'https://hooks.slack.com/services/T/B/x',
      ESCALATION_SCHEDULE_GROUP: 'esc',
      ESCALATION_FUNCTION_ARN: 'arn:aws:lambda:eu-west-1:123456789012:function:check',
      ESCALATION_ROLE_ARN: 'arn:aws:iam::123456789012:role/scheduler',
    };
    const queue = 'arn:aws:sqs:eu-west-1:123456789012:escalation-dead-letters';
    expect(
      loadConfig({ ...wiring, ESCALATION_DEAD_LETTER_QUEUE_ARN: queue }).escalation?.scheduler?.deadLetterQueueArn,
    ).toBe(queue);
    expect(
      problems({ ...wiring, ESCALATION_DEAD_LETTER_QUEUE_ARN: 'https://sqs.eu-west-1.amazonaws.com/123456789012/q' }),
    ).toEqual(['ESCALATION_DEAD_LETTER_QUEUE_ARN: must be an SQS queue ARN (arn:aws:sqs:REGION:ACCOUNT:NAME)']);
    expect(problems({ ESCALATION_DEAD_LETTER_QUEUE_ARN: queue })).toEqual([
      'ESCALATION_DEAD_LETTER_QUEUE_ARN: set, but the scheduler settings (ESCALATION_SCHEDULE_GROUP, ...) are not',
    ]);
  });

  describe('ESCALATION_CHANNELS: channel instances by name', () => {
    const dir = mkdtempSync(join(tmpdir(), 'escalation-channels-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    const routingFile = join(dir, 'routing.yml');
    writeFileSync(
      routingFile,
      [
        'channels:',
        '  oncall-pd:',
        '    type: pagerduty',
        '    routingKey: { secret: PD_ONCALL_KEY }',
        '  qwen-feishu:',
        '    type: feishu',
        '    webhookUrl: { secret: FEISHU_QWEN_URL }',
        '    locale: zh-CN',
        'default:',
        '  channels: [qwen-feishu]',
        '',
      ].join('\n'),
    );
    const routing = {
      ...ACK_LINKS,
      ROUTING_FILE: routingFile,
      PD_ONCALL_KEY: 'R'.repeat(32),
      FEISHU_QWEN_URL: 'https://open.feishu.cn/open-apis/bot/v2/hook/abc',
    };

    it("turns escalation on with the routing file's instances it names, each once, in its order", () => {
      const c = loadConfig({ ...routing, ESCALATION_CHANNELS: 'qwen-feishu, oncall-pd,qwen-feishu' });
      expect(c.escalation).toEqual({ delaySeconds: 900, targets: [], channels: ['qwen-feishu', 'oncall-pd'] });
      // Beside a setting's target, which keeps its own name.
      const both = loadConfig({
        ...routing,
        ESCALATION_CHANNELS: 'oncall-pd',
        ESCALATION_SNS_TOPIC_ARN: 'arn:aws:sns:eu-west-1:123456789012:escalations',
      });
      expect(both.escalation?.targets.map((t) => t.name)).toEqual(['escalation-sns']);
      expect(both.escalation?.channels).toEqual(['oncall-pd']);
    });

    it('names a name that is no instance, with the instances there are', () => {
      expect(problems({ ...routing, ESCALATION_CHANNELS: 'oncall-pd,oncall-pg' })).toEqual([
        'ESCALATION_CHANNELS: no channel instance named "oncall-pg" (known: oncall-pd, qwen-feishu)',
      ]);
      expect(problems({ ...ACK_LINKS, ESCALATION_CHANNELS: 'oncall-pd' })).toEqual([
        'ESCALATION_CHANNELS: no channel instance named "oncall-pd" (none: name the instances of ROUTING_FILE)',
      ]);
    });

    it("takes the environment's channels by their names too, without a routing file", () => {
      const c = loadConfig({
        ...ACK_LINKS,
        SLACK_WEBHOOK_URL: 'https://hooks.slack.com/services/T/B/x',
        ESCALATION_CHANNELS: 'slack',
      });
      expect(c.escalation?.channels).toEqual(['slack']);
    });

    it('wants acknowledgement links, as every escalation target does', () => {
      const { PUBLIC_URL: _, ...withoutUrl } = routing;
      expect(problems({ ...withoutUrl, ESCALATION_CHANNELS: 'oncall-pd' })).toEqual([
        'ESCALATION_CHANNELS: escalation needs acknowledgement links, but PUBLIC_URL is not set (every critical alert would escalate, since nobody could acknowledge it)',
      ]);
    });
  });

  it('takes the follow-up scheduler settings together, the dead-letter queue only with them', () => {
    const wiring = {
      FOLLOW_UP_SCHEDULE_GROUP: 'follow-ups',
      FOLLOW_UP_ROLE_ARN: 'arn:aws:iam::123456789012:role/follow-up-scheduler',
    };
    const queue = 'arn:aws:sqs:eu-west-1:123456789012:follow-up-dead-letters';
    expect(loadConfig({}).followUpScheduler).toBeUndefined();
    expect(loadConfig({ ...wiring, FOLLOW_UP_DEAD_LETTER_QUEUE_ARN: queue }).followUpScheduler).toEqual({
      groupName: 'follow-ups',
      roleArn: wiring.FOLLOW_UP_ROLE_ARN,
      deadLetterQueueArn: queue,
    });
    expect(problems({ FOLLOW_UP_SCHEDULE_GROUP: 'follow-ups' })).toEqual([
      'FOLLOW_UP_SCHEDULE_GROUP: set FOLLOW_UP_SCHEDULE_GROUP and FOLLOW_UP_ROLE_ARN together, or neither',
    ]);
    expect(problems({ FOLLOW_UP_DEAD_LETTER_QUEUE_ARN: queue })).toEqual([
      'FOLLOW_UP_DEAD_LETTER_QUEUE_ARN: set, but FOLLOW_UP_SCHEDULE_GROUP and FOLLOW_UP_ROLE_ARN are not',
    ]);
    expect(problems({ ...wiring, FOLLOW_UP_ROLE_ARN: 'follow-up-scheduler' })).toEqual([
      'FOLLOW_UP_ROLE_ARN: must be an IAM role ARN',
    ]);
  });
});
