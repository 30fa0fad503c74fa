/**
 * The ops alarms, topic and dashboard: each alarm watches the metric docs/operations.md promises, at its
 * threshold, notifies the ops topic on ALARM and OK, and shows on the one dashboard; CloudWatch (this
 * account's alarms only) may publish to the encrypted ops topic; the e-mail subscription comes from context.
 */
import type { CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alarmEmailFromContext } from '../../infra/context.js';
import { LlmAlertPipelineStack } from '../../infra/stack.js';
import { namesOf, show } from './policy.js';
import { scratchApp } from './synth.js';

interface AlarmProps {
  AlarmName: string;
  Namespace: string;
  MetricName: string;
  Dimensions?: { Name: string; Value: unknown }[];
  Statistic: string;
  Period: number;
  Threshold: number;
  ComparisonOperator: string;
  EvaluationPeriods: number;
  TreatMissingData: string;
  AlarmActions: unknown[];
  OKActions: unknown[];
  AlarmDescription: string;
  /** A metric-math alarm: the expression (`ReturnData`) and the metrics it uses. */
  Metrics?: {
    Id: string;
    Expression?: string;
    MetricStat?: { Metric: Pick<AlarmProps, 'Namespace' | 'MetricName' | 'Dimensions'>; Stat: string; Period: number };
  }[];
}

/** A metric-math alarm's period: its metrics' one period (`undefined` when they differ). */
function periodOf(a: AlarmProps): number | undefined {
  const periods = new Set((a.Metrics ?? []).flatMap((m) => (m.MetricStat ? [m.MetricStat.Period] : [])));
  return periods.size === 1 ? [...periods][0] : undefined;
}

describe('ops alarms (escalation on, alarm e-mail given)', () => {
  const scratch = scratchApp({ 'aws:cdk:bundling-stacks': [] });
  let stack: LlmAlertPipelineStack;
  let template: Template;
  let names: Map<string, string>;
  let alarms: [string, AlarmProps][];
  let bare: Template;
  const id = (c: { node: { defaultChild?: unknown } }) => stack.getLogicalId(c.node.defaultChild as CfnElement);

  beforeAll(() => {
    stack = new LlmAlertPipelineStack(scratch.app, 'Watched', {
      settings: { publicUrl: 'https://alerts.example.com' },
      escalation: { delaySeconds: 600 },
      alarmEmail: 'oncall@example.com',
    });
    const unsubscribed = new LlmAlertPipelineStack(scratch.app, 'Unsubscribed');
    template = Template.fromStack(stack);
    bare = Template.fromStack(unsubscribed);
    const esc = stack.escalation!;
    names = namesOf(stack, {
      Receiver: stack.receiver.function,
      Check: esc.function,
      Table: stack.table,
      AlertTopic: stack.topic,
      EscalationTopic: stack.escalationTopic!,
      FailedChecks: esc.failedChecks,
      ScheduleDeadLetters: esc.scheduleDeadLetters,
      FollowUpDeadLetters: stack.followUps!.scheduleDeadLetters,
      OpsTopic: stack.operations.topic,
      OpsKey: stack.operations.key,
    });
    alarms = Object.entries(template.findResources('AWS::CloudWatch::Alarm')).map(([logicalId, r]) => [
      logicalId,
      r.Properties as AlarmProps,
    ]);
  });
  afterAll(() => scratch.dispose());

  it('watches each metric at its threshold, over 5 minutes', () => {
    const metric = (m: Pick<AlarmProps, 'Namespace' | 'MetricName' | 'Dimensions'>) =>
      `${m.Namespace} ${m.MetricName}{${(m.Dimensions ?? []).map((d) => `${d.Name}=${show(d.Value, names)}`).join(',')}}`;
    const watched = alarms.map(([, a]) => {
      const watching = a.Metrics
        ? `math ${a.Metrics.find((m) => m.Expression)!.Expression} [${a.Metrics.filter((m) => m.MetricStat)
            .map((m) => `${m.Id}=${metric(m.MetricStat!.Metric)} ${m.MetricStat!.Stat}`)
            .join(', ')}]`
        : `${metric(a)} ${a.Statistic}`;
      return `${watching} >= ${a.Threshold} missing:${a.TreatMissingData}`;
    });
    expect(watched.sort()).toEqual(
      [
        'AWS/Lambda Url5xxCount{FunctionName=Receiver} Sum >= 1 missing:notBreaching',
        // Internet noise (no token, unknown paths) answered 4xx is taken out: it means no lost alert.
        'math FILL(url4xx, 0) - FILL(noise, 0) [url4xx=AWS/Lambda Url4xxCount{FunctionName=Receiver} Sum, noise=LlmAlertPipeline llm_alert_pipeline_unsolicited_requests_total{} Sum] >= 1 missing:notBreaching',
        'AWS/Lambda Errors{FunctionName=Receiver} Sum >= 1 missing:notBreaching',
        'AWS/Lambda Throttles{FunctionName=Receiver} Sum >= 1 missing:notBreaching',
        'AWS/Lambda Duration{FunctionName=Receiver} Maximum >= 24000 missing:notBreaching',
        'AWS/Lambda Errors{FunctionName=Check} Sum >= 1 missing:notBreaching',
        'AWS/Lambda Throttles{FunctionName=Check} Sum >= 1 missing:notBreaching',
        'AWS/Lambda Duration{FunctionName=Check} Maximum >= 48000 missing:notBreaching',
        'AWS/SQS ApproximateNumberOfMessagesVisible{QueueName=FailedChecks.QueueName} Maximum >= 1 missing:notBreaching',
        'AWS/SQS ApproximateNumberOfMessagesVisible{QueueName=ScheduleDeadLetters.QueueName} Maximum >= 1 missing:notBreaching',
        'AWS/SQS ApproximateNumberOfMessagesVisible{QueueName=FollowUpDeadLetters.QueueName} Maximum >= 1 missing:notBreaching',
        'AWS/SNS NumberOfNotificationsFailed{TopicName=AlertTopic.TopicName} Sum >= 1 missing:notBreaching',
        'AWS/SNS NumberOfNotificationsFailed{TopicName=EscalationTopic.TopicName} Sum >= 1 missing:notBreaching',
        'AWS/DynamoDB ReadThrottleEvents{TableName=Table} Sum >= 1 missing:notBreaching',
        'AWS/DynamoDB WriteThrottleEvents{TableName=Table} Sum >= 1 missing:notBreaching',
        'LlmAlertPipeline llm_alert_pipeline_notifications_failed{} Sum >= 1 missing:notBreaching',
        'LlmAlertPipeline llm_alert_pipeline_webhook_wrong_token_total{} Sum >= 1 missing:notBreaching',
        'LlmAlertPipeline llm_alert_pipeline_heartbeat_missing{} Maximum >= 1 missing:breaching', // the heartbeat check runs every minute: no data means it stopped
        // A heartbeat refused for lack of room: a cluster the dead-man's switch does not watch.
        'LlmAlertPipeline llm_alert_pipeline_heartbeats_ignored_total{reason=too_many} Sum >= 1 missing:notBreaching',
      ].sort(),
    );
    expect(alarms.map(([, a]) => a.AlarmName).sort()).toEqual(
      [
        'WebhookUrl5xx',
        'WebhookUrl4xx',
        'ReceiverErrors',
        'ReceiverThrottles',
        'ReceiverDuration',
        'EscalationCheckErrors',
        'EscalationCheckThrottles',
        'EscalationCheckDuration',
        'FailedChecksDepth',
        'ScheduleDeadLettersDepth',
        'FollowUpScheduleDeadLettersDepth',
        'AlertTopicNotificationsFailed',
        'EscalationTopicNotificationsFailed',
        'DedupeTableReadThrottles',
        'DedupeTableWriteThrottles',
        'PipelineDeliveryFailures',
        'PipelineUnauthenticated',
        'HeartbeatMissing',
        'HeartbeatNotWatched',
      ]
        .map((name) => `Watched-${name}`)
        .sort(),
    );
    for (const [, a] of alarms) {
      expect([a.Period ?? periodOf(a), a.EvaluationPeriods, a.ComparisonOperator]).toEqual([
        300,
        1,
        'GreaterThanOrEqualToThreshold',
      ]);
      expect(a.AlarmDescription.length).toBeGreaterThan(60);
    }
  });

  it('notifies the ops topic when an alarm fires and when it clears', () => {
    for (const [logicalId, a] of alarms) {
      expect(
        a.AlarmActions.map((x) => show(x, names)),
        logicalId,
      ).toEqual(['OpsTopic']);
      expect(
        a.OKActions.map((x) => show(x, names)),
        logicalId,
      ).toEqual(['OpsTopic']);
    }
  });

  it('shows every alarm on one dashboard', () => {
    const dashboards = Object.values(template.findResources('AWS::CloudWatch::Dashboard'));
    expect(dashboards).toHaveLength(1);
    const body = JSON.stringify(dashboards[0]!.Properties.DashboardBody);
    for (const [logicalId] of alarms) expect(body, logicalId).toContain(`"${logicalId}","Arn"`);
    template.hasOutput('DashboardName', {
      Value: { Ref: stack.getLogicalId(stack.operations.dashboard.node.defaultChild as CfnElement) },
    });
  });

  it("lets only this account's alarms publish to the ops topic, encrypted with a rotated key CloudWatch may use", () => {
    const fromOurAlarms = {
      StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
      ArnLike: {
        'aws:SourceArn': {
          'Fn::Join': [
            '',
            [
              'arn:',
              { Ref: 'AWS::Partition' },
              ':cloudwatch:',
              { Ref: 'AWS::Region' },
              ':',
              { Ref: 'AWS::AccountId' },
              ':alarm:*',
            ],
          ],
        },
      },
    };
    template.hasResourceProperties('AWS::SNS::Topic', {
      KmsMasterKeyId: { 'Fn::GetAtt': [id(stack.operations.key), 'Arn'] },
    });
    template.hasResourceProperties('AWS::KMS::Key', { EnableKeyRotation: true });
    const keyPolicy = template.toJSON().Resources[id(stack.operations.key)].Properties.KeyPolicy.Statement as Record<
      string,
      unknown
    >[];
    expect(keyPolicy).toContainEqual({
      Effect: 'Allow',
      Principal: { Service: 'cloudwatch.amazonaws.com' },
      Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
      Resource: '*',
      Condition: fromOurAlarms,
    });
    const topicPolicy = Object.values(template.findResources('AWS::SNS::TopicPolicy')).find(
      (p) => JSON.stringify(p.Properties.Topics) === JSON.stringify([{ Ref: id(stack.operations.topic) }]),
    )!;
    expect(topicPolicy.Properties.PolicyDocument.Statement).toContainEqual(
      expect.objectContaining({
        Effect: 'Allow',
        Principal: { Service: 'cloudwatch.amazonaws.com' },
        Action: 'sns:Publish',
        Resource: { Ref: id(stack.operations.topic) },
        Condition: fromOurAlarms,
      }),
    );
    template.hasOutput('OpsTopicArn', { Value: { Ref: id(stack.operations.topic) } });
  });

  it('subscribes the alarm e-mail to the ops topic, and nothing without one', () => {
    template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'oncall@example.com',
      TopicArn: { Ref: id(stack.operations.topic) },
    });
    template.resourceCountIs('AWS::SNS::Subscription', 1);
    bare.resourceCountIs('AWS::SNS::Subscription', 0);
    bare.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
  });
});

describe('alarmEmailFromContext', () => {
  it('takes an e-mail address when given, and names a bad one', () => {
    expect(alarmEmailFromContext(() => undefined)).toBeUndefined();
    expect(alarmEmailFromContext(() => '')).toBeUndefined();
    expect(alarmEmailFromContext(() => 'oncall@example.com')).toBe('oncall@example.com');
    expect(() => alarmEmailFromContext(() => 'oncall')).toThrow(/^alarmEmail: must be an e-mail address/);
  });
});
