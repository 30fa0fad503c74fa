/**
 * AMP through SNS in the stack: the receiver subscribed to the given or created topic, with a
 * dead-letter queue for what SNS cannot deliver and an on-failure destination for what still fails
 * after Lambda's retries; a created topic (and its key) admit only AMP workspaces of this account;
 * context keys checked at synth.
 */
import { Template, Match } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AMP_MAX_EVENT_AGE_HOURS, AMP_RETRY_ATTEMPTS } from '../../infra/amp.js';
import { ampFromContext, ContextError } from '../../infra/context.js';
import { LlmAlertPipelineStack } from '../../infra/stack.js';
import { scratchApp } from './synth.js';

const GIVEN = 'arn:aws:sns:eu-west-1:123456789012:amp-alerts';
const WORKSPACE = 'arn:aws:aps:eu-west-1:123456789012:workspace/ws-0f1e2d3c-4b5a-6978-8c7d-6e5f4a3b2c1d';

describe('ampFromContext', () => {
  const from = (context: Record<string, unknown>) => ampFromContext((key) => context[key]);

  it('reads a given topic, a created one, and a created one for one workspace', () => {
    expect(from({})).toBeUndefined();
    expect(from({ ampTopicArn: GIVEN })).toEqual({ topicArn: GIVEN });
    expect(from({ ampTopic: 'create' })).toEqual({ workspaceArn: undefined });
    expect(from({ ampTopic: 'create', ampWorkspaceArn: WORKSPACE })).toEqual({ workspaceArn: WORKSPACE });
  });

  it.each([
    [{ ampTopic: 'yes' }, /^ampTopic: the only value is "create"/],
    [{ ampTopic: 'create', ampTopicArn: GIVEN }, /^ampTopic: give either/],
    [{ ampTopicArn: 'amp-alerts' }, /^ampTopicArn: must be a standard SNS topic ARN/],
    [{ ampTopicArn: `${GIVEN}.fifo` }, /^ampTopicArn: must be a standard SNS topic ARN/],
    [{ ampTopicArn: GIVEN, ampWorkspaceArn: WORKSPACE }, /^ampWorkspaceArn: only with ampTopic=create/],
    [{ ampTopic: 'create', ampWorkspaceArn: 'ws-1' }, /^ampWorkspaceArn: must be an AMP workspace ARN/],
  ])('refuses %j naming the key', (context, message) => {
    expect(() => from(context)).toThrow(ContextError);
    expect(() => from(context)).toThrow(message);
  });
});

describe('the AMP subscription', () => {
  const scratch = scratchApp({ 'aws:cdk:bundling-stacks': [] });
  let created: LlmAlertPipelineStack;
  let createdT: Template;
  let givenT: Template;
  let plainT: Template;
  let oneWorkspaceT: Template;
  const ref = (stack: LlmAlertPipelineStack, construct: { node: { defaultChild?: unknown } }) => stack.getLogicalId(construct.node.defaultChild as never);

  beforeAll(() => {
    // Every stack first: the app is synthesized once, by the first Template.fromStack.
    created = new LlmAlertPipelineStack(scratch.app, 'AmpCreated', { amp: {} });
    const given = new LlmAlertPipelineStack(scratch.app, 'AmpGiven', { amp: { topicArn: GIVEN } });
    const plain = new LlmAlertPipelineStack(scratch.app, 'AmpNone', {});
    const oneWorkspace = new LlmAlertPipelineStack(scratch.app, 'AmpOneWorkspace', { amp: { workspaceArn: WORKSPACE } });
    createdT = Template.fromStack(created);
    givenT = Template.fromStack(given);
    plainT = Template.fromStack(plain);
    oneWorkspaceT = Template.fromStack(oneWorkspace);
  });
  afterAll(() => scratch.dispose());

  it('subscribes the receiver function to the created topic, undeliverable messages to a dead-letter queue', () => {
    const amp = created.amp!;
    const receiver = ref(created, created.receiver.function);
    createdT.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'lambda',
      TopicArn: { Ref: ref(created, amp.topic as never) },
      Endpoint: { 'Fn::GetAtt': [receiver, 'Arn'] },
      RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [ref(created, amp.undeliverable), 'Arn'] } },
    });
    createdT.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunction',
      Principal: 'sns.amazonaws.com',
      FunctionName: { 'Fn::GetAtt': [receiver, 'Arn'] },
      SourceArn: { Ref: ref(created, amp.topic as never) },
    });
    // SNS may put undeliverable messages in the queue, from this topic only.
    createdT.hasResourceProperties('AWS::SQS::QueuePolicy', {
      Queues: [{ Ref: ref(created, amp.undeliverable) }],
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Allow',
            Principal: { Service: 'sns.amazonaws.com' },
            Action: 'sqs:SendMessage',
            Condition: { ArnEquals: { 'aws:SourceArn': { Ref: ref(created, amp.topic as never) } } },
          }),
        ]),
      },
    });
  });

  it('retries a failed SNS event twice within 6 h, then keeps it in the failed-events queue', () => {
    createdT.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: ref(created, created.receiver.function) },
      MaximumRetryAttempts: AMP_RETRY_ATTEMPTS,
      MaximumEventAgeInSeconds: AMP_MAX_EVENT_AGE_HOURS * 3600,
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [ref(created, created.amp!.failedEvents), 'Arn'] } } },
    });
    expect(Object.keys(plainT.findResources('AWS::Lambda::EventInvokeConfig'))).toEqual([]);
  });

  it("lets AMP publish to the created topic, through its own key, from this account's workspaces only", () => {
    const fromOurs = {
      StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
      ArnLike: { 'aws:SourceArn': { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':aps:', { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }, ':workspace/*']] } },
    };
    createdT.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([Match.objectLike({ Effect: 'Allow', Principal: { Service: 'aps.amazonaws.com' }, Action: ['sns:Publish', 'sns:GetTopicAttributes'], Condition: fromOurs })]),
      },
    });
    createdT.hasResourceProperties('AWS::KMS::Key', {
      EnableKeyRotation: true,
      KeyPolicy: {
        Statement: Match.arrayWith([Match.objectLike({ Effect: 'Allow', Principal: { Service: 'aps.amazonaws.com' }, Action: ['kms:Decrypt', 'kms:GenerateDataKey*'], Condition: fromOurs })]),
      },
    });
    createdT.hasResourceProperties('AWS::SNS::Topic', { KmsMasterKeyId: { 'Fn::GetAtt': [ref(created, created.amp!.key!), 'Arn'] } });
    oneWorkspaceT.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([Match.objectLike({ Principal: { Service: 'aps.amazonaws.com' }, Condition: { StringEquals: Match.anyValue(), ArnLike: { 'aws:SourceArn': WORKSPACE } } })]),
      },
    });
  });

  it('subscribes to a given topic without touching its policy', () => {
    givenT.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'lambda', TopicArn: GIVEN, RedrivePolicy: { deadLetterTargetArn: Match.anyValue() } });
    givenT.hasResourceProperties('AWS::Lambda::Permission', { Principal: 'sns.amazonaws.com', SourceArn: GIVEN });
    expect(JSON.stringify(givenT.toJSON())).not.toContain('aps.amazonaws.com');
    givenT.hasOutput('AmpTopicArn', { Value: GIVEN });
  });

  it('adds nothing for AMP when not asked', () => {
    expect(Object.keys(plainT.findResources('AWS::SNS::Subscription'))).toEqual([]);
    expect(JSON.stringify(plainT.toJSON())).not.toMatch(/aps\.amazonaws\.com|AmpTopicArn/);
  });

  it("alarms on both queues, on the topic's failed deliveries, and on unparsed bodies", () => {
    const names = Object.values(createdT.findResources('AWS::CloudWatch::Alarm')).map((a) => (a.Properties as { AlarmName: string }).AlarmName);
    expect(names).toEqual(expect.arrayContaining(['AmpCreated-AmpFailedEventsDepth', 'AmpCreated-AmpUndeliverableDepth', 'AmpCreated-AmpTopicNotificationsFailed', 'AmpCreated-AmpUnparsed']));
    createdT.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'AmpCreated-AmpUnparsed',
      MetricName: 'llm_alert_pipeline_amp_messages_total',
      Dimensions: [{ Name: 'body', Value: 'unparsed' }],
      Threshold: 1,
    });
  });
});
