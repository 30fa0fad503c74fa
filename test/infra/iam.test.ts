/**
 * Exact IAM: each role of the stack holds only what its code sends (the AWS SDK commands in
 * `shared/` and `functions/`) plus what the Lambda service does on the function's behalf (writing
 * its log streams, the async-failure destination). No CDK grant helper's extras (`DescribeTable`,
 * `Scan`, `DescribeSecret`, `GetQueueUrl`, a function's `:*` versions), no managed policies.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Template } from 'aws-cdk-lib/assertions';
import type { Role } from 'aws-cdk-lib/aws-iam';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LlmAlertPipelineStack } from '../../infra/stack.js';
import { grantsOf, managedPoliciesOf, namesOf } from './policy.js';
import { scratchApp } from './synth.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ROUTING = fileURLToPath(new URL('./fixtures/routing-audit.yml', import.meta.url));
const AUDIT_TOPIC = 'arn:aws:sns:eu-west-1:123456789012:llm-audit';

/**
 * Every AWS SDK command the code constructs, and the IAM actions sending it needs in Lambda.
 * `[]`: never sent in Lambda (with the reason). A new command fails the test below until it is listed here.
 */
const SDK_COMMANDS: Record<string, string[]> = {
  GetSecretValueCommand: ['secretsmanager:GetSecretValue'], // shared/runtime/settings-secret.ts, at cold start
  PublishCommand: ['sns:Publish'], // shared/channels/sns/index.ts
  CreateScheduleCommand: ['scheduler:CreateSchedule', 'iam:PassRole'], // shared/escalation/eventbridge-scheduler.ts (escalation checks, follow-up tries); PassRole: the target's RoleArn
  DeleteScheduleCommand: ['scheduler:DeleteSchedule'],
  GetCommand: ['dynamodb:GetItem'], // lib-dynamodb: shared/store/dedupe-dynamodb.ts, shared/store/alert-record-dynamodb.ts
  PutCommand: ['dynamodb:PutItem'],
  UpdateCommand: ['dynamodb:UpdateItem'],
  InvokeCommand: ['lambda:InvokeFunction'], // shared/runtime/ack.ts: an alert set's next step, the receiver invoking itself
  BatchGetCommand: ['dynamodb:BatchGetItem'],
  BatchWriteCommand: ['dynamodb:BatchWriteItem'],
  CreateTableCommand: [], // shared/store/table.ts: only npm start's local table; the stack creates the real one
  UpdateTimeToLiveCommand: [], // likewise
  ScanCommand: [], // alert-record-dynamodb.ts scheduledEscalations, follow-ups.ts list: only npm start re-arming its timers at start; Lambda schedules both through EventBridge Scheduler
  DeleteItemCommand: [], // shared/store/local-dynamodb.ts sweepExpired: only npm start's embedded dynalite, standing in for DynamoDB's TTL
  DeleteCommand: ['dynamodb:DeleteItem'], // shared/store/follow-ups.ts: a kept follow-up delivered or given up (the receiver only, followup# keys only)
};

/** What Lambda itself does with the function's role: its log streams, the async failure destination. */
const SERVICE_ACTIONS = ['logs:CreateLogStream', 'logs:PutLogEvents', 'sqs:SendMessage', 'lambda:InvokeFunction'];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

describe('IAM of the stack (escalation on, a routing file naming a second topic, an AMP topic)', () => {
  const scratch = scratchApp({ 'aws:cdk:bundling-stacks': [] });
  let stack: LlmAlertPipelineStack;
  let template: Template;
  let names: Map<string, string>;
  let group: string;
  let followUpGroup: string;
  const grants = (role: Role) => grantsOf(template, stack.getLogicalId(role.node.defaultChild as never), names);

  beforeAll(() => {
    stack = new LlmAlertPipelineStack(scratch.app, 'Exact', {
      routingFile: ROUTING,
      settings: { publicUrl: 'https://alerts.example.com' },
      escalation: { delaySeconds: 600 },
      amp: {},
    });
    template = Template.fromStack(stack);
    const esc = stack.escalation!;
    names = namesOf(stack, {
      Table: stack.table,
      AlertTopic: stack.topic,
      EscalationTopic: stack.escalationTopic!,
      SettingsSecret: stack.settingsSecret,
      ReceiverLogs: stack.receiver.logGroup,
      ReceiverFunction: stack.receiver.function,
      CheckLogs: esc.logGroup,
      CheckFunction: esc.function,
      SchedulerRole: esc.schedulerRole,
      FailedChecks: esc.failedChecks,
      ScheduleDeadLetters: esc.scheduleDeadLetters,
      AmpFailedEvents: stack.amp!.failedEvents,
      FollowUpSchedulerRole: stack.followUps!.schedulerRole,
      FollowUpDeadLetters: stack.followUps!.scheduleDeadLetters,
    });
    followUpGroup = stack.resolve(stack.followUps!.scheduleGroup.scheduleGroupName) as string;
    group = stack.resolve(esc.scheduleGroup.scheduleGroupName) as string;
  });
  afterAll(() => scratch.dispose());

  const TABLE = ['BatchGetItem', 'BatchWriteItem', 'GetItem', 'PutItem', 'UpdateItem'].map(
    (a) => `dynamodb:${a} Table.Arn`,
  );

  it('gives the receiver exactly: its log streams, the table items, the three topics, the secret, its schedules, its AMP failure queue, and invoking itself', () => {
    const schedules = `arn:\${AWS::Partition}:scheduler:\${AWS::Region}:\${AWS::AccountId}:schedule/${group}/*`;
    const followUpSchedules = `arn:\${AWS::Partition}:scheduler:\${AWS::Region}:\${AWS::AccountId}:schedule/${followUpGroup}/*`;
    expect(grants(stack.receiver.function.role as Role)).toEqual(
      [
        ...TABLE,
        // Kept follow-ups: dropped once delivered or given up, their items only; their tries scheduled.
        'dynamodb:DeleteItem Table.Arn if {ForAllValues:StringLike: {dynamodb:LeadingKeys: followup#*}}',
        `scheduler:CreateSchedule ${followUpSchedules}`,
        'iam:PassRole FollowUpSchedulerRole.Arn if {StringEquals: {iam:PassedToService: scheduler.amazonaws.com}}',
        'iam:PassRole SchedulerRole.Arn if {StringEquals: {iam:PassedToService: scheduler.amazonaws.com}}',
        'lambda:InvokeFunction ReceiverFunction.Arn',
        'logs:CreateLogStream ReceiverLogs.Arn',
        'logs:PutLogEvents ReceiverLogs.Arn',
        `scheduler:CreateSchedule ${schedules}`,
        `scheduler:DeleteSchedule ${schedules}`,
        'secretsmanager:GetSecretValue SettingsSecret',
        'sns:Publish AlertTopic',
        'sns:Publish EscalationTopic',
        `sns:Publish ${AUDIT_TOPIC}`,
        'sqs:SendMessage AmpFailedEvents.Arn',
      ].sort(),
    );
  });

  it('gives the escalation check exactly: its log streams, the table items, the topics, the secret, its failure queue', () => {
    expect(grants(stack.escalation!.function.role as Role)).toEqual(
      [
        ...TABLE,
        'logs:CreateLogStream CheckLogs.Arn',
        'logs:PutLogEvents CheckLogs.Arn',
        'secretsmanager:GetSecretValue SettingsSecret',
        // It builds the receiver's channels from the routing file, but sends only to the instances
        // escalationChannels names (none here): no routing-file topic.
        'sns:Publish EscalationTopic',
        'sqs:SendMessage FailedChecks.Arn',
      ].sort(),
    );
  });

  it('lets Scheduler invoke the check (its unqualified ARN only) and dead-letter undeliverable checks', () => {
    expect(grants(stack.escalation!.schedulerRole)).toEqual([
      'lambda:InvokeFunction CheckFunction.Arn',
      'sqs:SendMessage ScheduleDeadLetters.Arn',
    ]);
  });

  it("lets Scheduler invoke the receiver for a follow-up's try (its unqualified ARN only) and dead-letter undeliverable tries", () => {
    expect(grants(stack.followUps!.schedulerRole)).toEqual([
      'lambda:InvokeFunction ReceiverFunction.Arn',
      'sqs:SendMessage FollowUpDeadLetters.Arn',
    ]);
  });

  it('trusts only Scheduler of this account with the follow-up role', () => {
    const role =
      template.toJSON().Resources[stack.getLogicalId(stack.followUps!.schedulerRole.node.defaultChild as never)];
    expect(role.Properties.AssumeRolePolicyDocument.Statement).toEqual([
      {
        Action: 'sts:AssumeRole',
        Effect: 'Allow',
        Principal: { Service: 'scheduler.amazonaws.com' },
        Condition: { StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } } },
      },
    ]);
  });

  it('attaches no managed policy (AWSLambdaBasicExecutionRole grants logs on every group)', () => {
    const roles = Object.keys(template.findResources('AWS::IAM::Role'));
    expect(roles.length).toBeGreaterThanOrEqual(3);
    for (const role of roles) expect(managedPoliciesOf(template, role, names), role).toEqual([]);
  });

  it('knows every AWS SDK command the code constructs', () => {
    const sent = new Set<string>();
    for (const file of [...sourceFiles(join(ROOT, 'shared')), ...sourceFiles(join(ROOT, 'functions'))]) {
      for (const m of readFileSync(file, 'utf8').matchAll(/\bnew\s+(\w+Command)\s*\(/g)) sent.add(m[1]!);
    }
    expect([...sent].sort()).toEqual(Object.keys(SDK_COMMANDS).sort());
  });

  it('grants, across all roles, exactly the actions those commands need, plus what Lambda and Scheduler do for them', () => {
    const roles = Object.keys(template.findResources('AWS::IAM::Role'));
    const granted = new Set(roles.flatMap((r) => grantsOf(template, r, names)).map((line) => line.split(' ')[0]!));
    const needed = new Set(Object.values(SDK_COMMANDS).flat());
    expect([...granted].filter((a) => !needed.has(a) && !SERVICE_ACTIONS.includes(a))).toEqual([]);
    expect([...needed].filter((a) => !granted.has(a))).toEqual([]);
  });
});

describe('IAM of the escalation check when escalationChannels names SNS instances of the routing file', () => {
  const disposals: (() => void)[] = [];
  afterAll(() => {
    for (const dispose of disposals) dispose();
  });

  it('may publish to the named instances’ topics only: the audit topic; the stack’s own for the pager', () => {
    const grantsFor = (channels: string[]) => {
      const scratch = scratchApp({ 'aws:cdk:bundling-stacks': [] });
      disposals.push(scratch.dispose);
      const stack = new LlmAlertPipelineStack(scratch.app, 'Named', {
        routingFile: ROUTING,
        settings: { publicUrl: 'https://alerts.example.com' },
        escalation: { delaySeconds: 600, channels },
      });
      const names = namesOf(stack, {
        AlertTopic: stack.topic,
        EscalationTopic: stack.escalationTopic!,
      });
      const role = stack.escalation!.function.role as Role;
      return grantsOf(Template.fromStack(stack), stack.getLogicalId(role.node.defaultChild as never), names).filter(
        (g) => g.startsWith('sns:'),
      );
    };
    expect(grantsFor(['audit'])).toEqual(
      ['sns:Publish EscalationTopic', 'sns:Publish arn:aws:sns:eu-west-1:123456789012:llm-audit'].sort(),
    );
    expect(grantsFor(['audit', 'pager'])).toEqual(
      [
        'sns:Publish AlertTopic',
        'sns:Publish EscalationTopic',
        'sns:Publish arn:aws:sns:eu-west-1:123456789012:llm-audit',
      ].sort(),
    );
  });
});
