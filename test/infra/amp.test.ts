/**
 * AMP through SNS in the stack: the receiver subscribed to the given or created topic, with a
 * dead-letter queue for what SNS cannot deliver and an on-failure destination for what still fails
 * after Lambda's retries; a created topic (and its key) admit only AMP workspaces of this account;
 * context keys checked at synth.
 */
import { Template, Match } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Role } from 'aws-cdk-lib/aws-iam';
import { AMP_MAX_EVENT_AGE_HOURS, AMP_RETRY_ATTEMPTS, ampQueryEndpoint } from '../../infra/amp.js';
import { ampFromContext, ampWorkspaceFromContext, ContextError } from '../../infra/context.js';
import { LlmAlertPipelineStack } from '../../infra/stack.js';
import { grantsOf, namesOf } from './policy.js';
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
    // The workspace alone, or with a given topic, is what is queried (ampWorkspaceFromContext), not a topic.
    expect(from({ ampWorkspaceArn: WORKSPACE })).toBeUndefined();
    expect(from({ ampTopicArn: GIVEN, ampWorkspaceArn: WORKSPACE })).toEqual({ topicArn: GIVEN });
  });

  it.each([
    [{ ampTopic: 'yes' }, /^ampTopic: the only value is "create"/],
    [{ ampTopic: 'create', ampTopicArn: GIVEN }, /^ampTopic: give either/],
    [{ ampTopicArn: 'amp-alerts' }, /^ampTopicArn: must be a standard SNS topic ARN/],
    [{ ampTopicArn: `${GIVEN}.fifo` }, /^ampTopicArn: must be a standard SNS topic ARN/],
    [{ ampWorkspaceArn: `${WORKSPACE}/extra` }, /^ampWorkspaceArn: must be an AMP workspace ARN/],
    [{ ampTopic: 'create', ampWorkspaceArn: 'ws-1' }, /^ampWorkspaceArn: must be an AMP workspace ARN/],
  ])('refuses %j naming the key', (context, message) => {
    expect(() => from(context)).toThrow(ContextError);
    expect(() => from(context)).toThrow(message);
  });
});

describe('ampWorkspaceFromContext', () => {
  const from = (context: Record<string, unknown>) => ampWorkspaceFromContext((key) => context[key]);

  it('reads the workspace queried, alone or with a topic', () => {
    expect(from({})).toBeUndefined();
    expect(from({ ampWorkspaceArn: WORKSPACE })).toBe(WORKSPACE);
    expect(from({ ampWorkspaceArn: WORKSPACE, ampTopicArn: GIVEN })).toBe(WORKSPACE);
  });

  it.each([
    [{ ampWorkspaceArn: 'ws-1' }, /^ampWorkspaceArn: must be an AMP workspace ARN/],
    [
      { ampWorkspaceArn: WORKSPACE, prometheusUrl: 'https://prom.example.com' },
      /^ampWorkspaceArn: sets PROMETHEUS_URL/,
    ],
  ])('refuses %j naming the key', (context, message) => {
    expect(() => from(context)).toThrow(ContextError);
    expect(() => from(context)).toThrow(message);
  });

  it("gives the workspace's query endpoint and region, in the China partition too", () => {
    expect(ampQueryEndpoint(WORKSPACE)).toEqual({
      url: 'https://aps-workspaces.eu-west-1.amazonaws.com/workspaces/ws-0f1e2d3c-4b5a-6978-8c7d-6e5f4a3b2c1d',
      region: 'eu-west-1',
    });
    expect(ampQueryEndpoint('arn:aws-cn:aps:cn-north-1:123456789012:workspace/ws-1')).toEqual({
      url: 'https://aps-workspaces.cn-north-1.amazonaws.com.cn/workspaces/ws-1',
      region: 'cn-north-1',
    });
  });
});

describe('querying an AMP workspace (ampWorkspaceArn)', () => {
  const scratch = scratchApp({ 'aws:cdk:bundling-stacks': [] });
  let stack: LlmAlertPipelineStack;
  let template: Template;
  let names: Map<string, string>;
  let alone: LlmAlertPipelineStack;
  let aloneT: Template;
  const grants = (role: Role) => grantsOf(template, stack.getLogicalId(role.node.defaultChild as never), names);

  beforeAll(() => {
    // Every stack first: the app is synthesized once, by the first Template.fromStack.
    alone = new LlmAlertPipelineStack(scratch.app, 'AmpAlone', {
      settings: { publicUrl: 'https://alerts.example.com' },
      escalation: { delaySeconds: 600 },
      ampWorkspaceArn: WORKSPACE,
    });
    stack = new LlmAlertPipelineStack(scratch.app, 'AmpQuery', {
      settings: { publicUrl: 'https://alerts.example.com', alertmanagerUrl: 'https://am.example.com' },
      escalation: { delaySeconds: 600 },
      ampWorkspaceArn: WORKSPACE,
      vpc: {
        vpcId: 'vpc-0a1b2c3d4e5f60718',
        subnetIds: ['subnet-0a1b2c3d4e5f60711', 'subnet-0a1b2c3d4e5f60722'],
        interfaceEndpoints: true,
      },
    });
    template = Template.fromStack(stack);
    aloneT = Template.fromStack(alone);
    names = namesOf(stack, {});
  });
  afterAll(() => scratch.dispose());

  it("sets the receiver's PROMETHEUS_URL to the workspace's query endpoint and signs for its region", () => {
    const receiver =
      template.toJSON().Resources[stack.getLogicalId(stack.receiver.function.node.defaultChild as never)];
    expect(receiver.Properties.Environment.Variables).toMatchObject({
      PROMETHEUS_URL:
        'https://aps-workspaces.eu-west-1.amazonaws.com/workspaces/ws-0f1e2d3c-4b5a-6978-8c7d-6e5f4a3b2c1d',
      PROMETHEUS_SIGV4_REGION: 'eu-west-1',
      ALERTMANAGER_URL: 'https://am.example.com',
    });
  });

  it('lets the receiver query that workspace only, with exactly the four query actions (a given alertmanagerUrl is kept)', () => {
    const aps = grants(stack.receiver.function.role as Role).filter((line) => line.startsWith('aps:'));
    expect(aps).toEqual(
      ['aps:GetLabels', 'aps:GetMetricMetadata', 'aps:GetSeries', 'aps:QueryMetrics'].map((a) => `${a} ${WORKSPACE}`),
    );
    // The escalation check asks Alertmanager only.
    expect(grants(stack.escalation!.function.role as Role).filter((line) => line.startsWith('aps:'))).toEqual([]);
  });

  it("adds an interface endpoint for AMP's query API with the others", () => {
    template.hasResourceProperties('AWS::EC2::VPCEndpoint', {
      VpcEndpointType: 'Interface',
      PrivateDnsEnabled: true,
      ServiceName: { 'Fn::Join': ['', ['com.amazonaws.', { Ref: 'AWS::Region' }, '.aps-workspaces']] },
    });
  });

  it("without alertmanagerUrl, points silences and both checks at the workspace's alert manager, signed", () => {
    const t = aloneT;
    const byId = (fn: { node: { defaultChild?: unknown } }) =>
      t.toJSON().Resources[alone.getLogicalId(fn.node.defaultChild as never)];
    const alertmanager = {
      ALERTMANAGER_URL:
        'https://aps-workspaces.eu-west-1.amazonaws.com/workspaces/ws-0f1e2d3c-4b5a-6978-8c7d-6e5f4a3b2c1d/alertmanager',
      ALERTMANAGER_SIGV4_REGION: 'eu-west-1',
    };
    expect(byId(alone.receiver.function).Properties.Environment.Variables).toMatchObject(alertmanager);
    expect(byId(alone.escalation!.function).Properties.Environment.Variables).toMatchObject(alertmanager);
    const aps = (role: Role) =>
      grantsOf(t, alone.getLogicalId(role.node.defaultChild as never), new Map()).filter((l) => l.startsWith('aps:'));
    expect(aps(alone.receiver.function.role as Role)).toEqual(
      [
        'aps:GetLabels',
        'aps:GetMetricMetadata',
        'aps:GetSeries',
        'aps:ListAlertManagerAlerts',
        'aps:PutAlertManagerSilences',
        'aps:QueryMetrics',
      ].map((a) => `${a} ${WORKSPACE}`),
    );
    expect(aps(alone.escalation!.function.role as Role)).toEqual([`aps:ListAlertManagerAlerts ${WORKSPACE}`]);
  });

  it('refuses a prometheusUrl as well', () => {
    expect(
      () =>
        new LlmAlertPipelineStack(scratch.app, 'AmpQueryAndUrl', {
          settings: { prometheusUrl: 'https://prom.example.com' },
          ampWorkspaceArn: WORKSPACE,
        }),
    ).toThrow(/ampWorkspaceArn sets PROMETHEUS_URL itself/);
  });
});

describe('the AMP subscription', () => {
  const scratch = scratchApp({ 'aws:cdk:bundling-stacks': [] });
  let created: LlmAlertPipelineStack;
  let createdT: Template;
  let givenT: Template;
  let plainT: Template;
  let oneWorkspaceT: Template;
  const ref = (stack: LlmAlertPipelineStack, construct: { node: { defaultChild?: unknown } }) =>
    stack.getLogicalId(construct.node.defaultChild as never);

  beforeAll(() => {
    // Every stack first: the app is synthesized once, by the first Template.fromStack.
    created = new LlmAlertPipelineStack(scratch.app, 'AmpCreated', { amp: {} });
    const given = new LlmAlertPipelineStack(scratch.app, 'AmpGiven', { amp: { topicArn: GIVEN } });
    const plain = new LlmAlertPipelineStack(scratch.app, 'AmpNone', {});
    const oneWorkspace = new LlmAlertPipelineStack(scratch.app, 'AmpOneWorkspace', {
      amp: { workspaceArn: WORKSPACE },
    });
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
      DestinationConfig: {
        OnFailure: { Destination: { 'Fn::GetAtt': [ref(created, created.amp!.failedEvents), 'Arn'] } },
      },
    });
    expect(Object.keys(plainT.findResources('AWS::Lambda::EventInvokeConfig'))).toEqual([]);
  });

  it("lets AMP publish to the created topic, through its own key, from this account's workspaces only", () => {
    const fromOurs = {
      StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
      ArnLike: {
        'aws:SourceArn': {
          'Fn::Join': [
            '',
            [
              'arn:',
              { Ref: 'AWS::Partition' },
              ':aps:',
              { Ref: 'AWS::Region' },
              ':',
              { Ref: 'AWS::AccountId' },
              ':workspace/*',
            ],
          ],
        },
      },
    };
    createdT.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Allow',
            Principal: { Service: 'aps.amazonaws.com' },
            Action: ['sns:Publish', 'sns:GetTopicAttributes'],
            Condition: fromOurs,
          }),
        ]),
      },
    });
    createdT.hasResourceProperties('AWS::KMS::Key', {
      EnableKeyRotation: true,
      KeyPolicy: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Allow',
            Principal: { Service: 'aps.amazonaws.com' },
            Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
            Condition: fromOurs,
          }),
        ]),
      },
    });
    createdT.hasResourceProperties('AWS::SNS::Topic', {
      KmsMasterKeyId: { 'Fn::GetAtt': [ref(created, created.amp!.key!), 'Arn'] },
    });
    oneWorkspaceT.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Principal: { Service: 'aps.amazonaws.com' },
            Condition: { StringEquals: Match.anyValue(), ArnLike: { 'aws:SourceArn': WORKSPACE } },
          }),
        ]),
      },
    });
  });

  it('subscribes to a given topic without touching its policy', () => {
    givenT.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'lambda',
      TopicArn: GIVEN,
      RedrivePolicy: { deadLetterTargetArn: Match.anyValue() },
    });
    givenT.hasResourceProperties('AWS::Lambda::Permission', { Principal: 'sns.amazonaws.com', SourceArn: GIVEN });
    expect(JSON.stringify(givenT.toJSON())).not.toContain('aps.amazonaws.com');
    givenT.hasOutput('AmpTopicArn', { Value: GIVEN });
  });

  it('adds nothing for AMP when not asked', () => {
    expect(Object.keys(plainT.findResources('AWS::SNS::Subscription'))).toEqual([]);
    expect(JSON.stringify(plainT.toJSON())).not.toMatch(/aps\.amazonaws\.com|AmpTopicArn/);
  });

  it("alarms on both queues, on the topic's failed deliveries, and on unparsed bodies", () => {
    const names = Object.values(createdT.findResources('AWS::CloudWatch::Alarm')).map(
      (a) => (a.Properties as { AlarmName: string }).AlarmName,
    );
    expect(names).toEqual(
      expect.arrayContaining([
        'AmpCreated-AmpFailedEventsDepth',
        'AmpCreated-AmpUndeliverableDepth',
        'AmpCreated-AmpTopicNotificationsFailed',
        'AmpCreated-AmpUnparsed',
      ]),
    );
    createdT.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'AmpCreated-AmpUnparsed',
      MetricName: 'llm_alert_pipeline_amp_messages_total',
      Dimensions: [{ Name: 'body', Value: 'unparsed' }],
      Threshold: 1,
    });
  });
});
