/**
 * cdk-nag's AwsSolutions and Serverless packs over the whole stack, in its shapes (default; with
 * escalation, a routing file, the alarm e-mail and a created AMP topic; subscribed to a given AMP
 * topic; in a VPC): no finding may be left unexplained. Each
 * finding we accept is acknowledged on its resource with the reason, and the list below names them
 * all, so a new acknowledgment shows up in review as a change to this file.
 */
import { fileURLToPath } from 'node:url';
import { Validations } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nagPacks } from '../../infra/nag.js';
import { LlmAlertPipelineStack, type LlmAlertPipelineStackProps } from '../../infra/stack.js';
import { scratchApp } from './synth.js';

const ROUTING = fileURLToPath(new URL('./fixtures/routing-audit.yml', import.meta.url));

const SHAPES: [string, LlmAlertPipelineStackProps][] = [
  ['default', {}],
  [
    'escalation, routing file, alarm e-mail, AMP topic created',
    {
      settings: { publicUrl: 'https://alerts.example.com' },
      escalation: { delaySeconds: 600 },
      routingFile: ROUTING,
      alarmEmail: 'oncall@example.com',
      amp: {},
    },
  ],
  ['AMP topic given', { amp: { topicArn: 'arn:aws:sns:eu-west-1:123456789012:amp-alerts' } }],
  [
    'in a VPC, with escalation and interface endpoints',
    {
      settings: { publicUrl: 'https://alerts.example.com' },
      escalation: { delaySeconds: 600 },
      vpc: {
        vpcId: 'vpc-0a1b2c3d4e5f60718',
        subnetIds: ['subnet-0a1b2c3d4e5f60711', 'subnet-0a1b2c3d4e5f60722'],
        routeTableIds: ['rtb-0a1b2c3d4e5f60711'],
        interfaceEndpoints: true,
      },
    },
  ],
];

/** `rule path` of every finding the packs report (the path below the stack). */
function findings(stack: LlmAlertPipelineStack): string[] {
  return nagPacks().flatMap((pack) =>
    pack
      .validateScope(stack)
      .violations.flatMap((v) =>
        v.violatingResources.map((r) => `${v.ruleName} ${(r.constructPath ?? '?').replace(`${stack.node.path}/`, '')}`),
      ),
  );
}

/** Every acknowledgment in the stack: the rule, where (below the stack) and why. */
function acknowledgments(stack: LlmAlertPipelineStack): { rule: string; path: string; reason: string }[] {
  return stack.node.findAll().flatMap((c) =>
    c.node.metadata
      .filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((m) => Object.entries(m.data as Record<string, string>))
      .map(([rule, reason]) => ({
        rule: rule.replace(/^annotation::/i, ''),
        path: c.node.path.replace(`${stack.node.path}/`, ''),
        reason,
      })),
  );
}

describe('cdk-nag (AwsSolutions, Serverless)', () => {
  const scratch = scratchApp({ 'aws:cdk:bundling-stacks': [] });
  afterAll(() => scratch.dispose());
  const stacks = new Map(
    SHAPES.map(([name, props], i) => [name, new LlmAlertPipelineStack(scratch.app, `Nag${i}`, props)]),
  );
  const templates = new Map<string, Template>();
  // Synthesize first: the packs then see the tree exactly as `cdk synth` hands it over.
  beforeAll(() => {
    for (const [name, stack] of stacks) templates.set(name, Template.fromStack(stack));
  });

  it.each(SHAPES.map(([name]) => name))('finds nothing unacknowledged in the %s stack', (name) => {
    expect(findings(stacks.get(name)!)).toEqual([]);
  });

  it('acknowledges exactly these findings, each with its reason', () => {
    const stack = stacks.get('escalation, routing file, alarm e-mail, AMP topic created')!;
    const group = stack.resolve(stack.escalation!.scheduleGroup.scheduleGroupName) as string;
    const followUpGroup = stack.resolve(stack.followUps!.scheduleGroup.scheduleGroupName) as string;
    const acks = acknowledgments(stack);
    expect(acks.map((a) => `${a.rule} ${a.path}`).sort()).toEqual(
      [
        'AwsSolutions-SMG4 SettingsSecret',
        'Serverless-LambdaDLQ Receiver/Function',
        'Serverless-LambdaDLQ Escalation/Function',
        'Serverless-LambdaTracing Receiver/Function',
        'Serverless-LambdaTracing Escalation/Function',
        `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule/${group}/*] Receiver/Role`,
        'Serverless-SNSRedrivePolicy Operations/Topic/oncall@example.com',
        'AwsSolutions-SQS3 Escalation/FailedChecks',
        'Serverless-SQSRedrivePolicy Escalation/FailedChecks',
        'AwsSolutions-SQS3 Escalation/ScheduleDeadLetters',
        'Serverless-SQSRedrivePolicy Escalation/ScheduleDeadLetters',
        'AwsSolutions-SQS3 Amp/Undeliverable',
        'Serverless-SQSRedrivePolicy Amp/Undeliverable',
        `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule/${followUpGroup}/*] Receiver/Role`,
        'AwsSolutions-SQS3 FollowUps/ScheduleDeadLetters',
        'Serverless-SQSRedrivePolicy FollowUps/ScheduleDeadLetters',
        'AwsSolutions-SQS3 Amp/FailedEvents',
        'Serverless-SQSRedrivePolicy Amp/FailedEvents',
      ].sort(),
    );
    for (const a of acks)
      expect(a.reason.length, `${a.rule} ${a.path}: a reason a reviewer can check`).toBeGreaterThanOrEqual(40);
  });

  it.each(SHAPES.map(([name]) => name))(
    'encrypts every topic and queue at rest and refuses them over plain HTTP (%s)',
    (name) => {
      const resources = templates.get(name)!.toJSON().Resources as Record<
        string,
        { Type: string; Properties: Record<string, unknown> }
      >;
      const denyWithoutTls = (policyType: string, targets: string, id: string) =>
        Object.values(resources).some(
          (r) =>
            r.Type === policyType &&
            JSON.stringify(r.Properties[targets]).includes(`{"Ref":"${id}"}`) &&
            (r.Properties.PolicyDocument as { Statement: Record<string, unknown>[] }).Statement.some(
              (st) =>
                st.Effect === 'Deny' &&
                ['"*"', '{"AWS":"*"}'].includes(JSON.stringify(st.Principal)) &&
                JSON.stringify(st.Condition) === '{"Bool":{"aws:SecureTransport":"false"}}',
            ),
        );
      const topics = Object.entries(resources).filter(([, r]) => r.Type === 'AWS::SNS::Topic');
      const queues = Object.entries(resources).filter(([, r]) => r.Type === 'AWS::SQS::Queue');
      expect(topics.length).toBeGreaterThanOrEqual(2);
      for (const [id, topic] of topics) {
        expect(topic.Properties.KmsMasterKeyId, id).toBeDefined();
        expect(denyWithoutTls('AWS::SNS::TopicPolicy', 'Topics', id), id).toBe(true);
      }
      for (const [id, queue] of queues) {
        expect(queue.Properties.SqsManagedSseEnabled, id).toBe(true);
        expect(denyWithoutTls('AWS::SQS::QueuePolicy', 'Queues', id), id).toBe(true);
      }
    },
  );
});
