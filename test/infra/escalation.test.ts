/**
 * The escalation wiring of the stack (context `escalationDelaySeconds`): the check function (its real
 * entry, bundled by local esbuild), the schedule group, the role Scheduler assumes, the receiver's
 * rights to schedule, and the settings each function reads. IAM is asserted statement by statement.
 */
import type { CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { App } from 'aws-cdk-lib';
import { ContextError, escalationFromContext } from '../../infra/context.js';
import { definePipeline } from '../../infra/pipeline.js';
import { LlmAlertPipelineStack } from '../../infra/stack.js';
import { scratchApp } from './synth.js';

interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: unknown;
  Principal?: unknown;
}

describe('LlmAlertPipelineStack with escalation', () => {
  const scratch = scratchApp();
  let stack: LlmAlertPipelineStack;
  let template: Template;
  const id = (construct: { node: { defaultChild?: unknown } }) =>
    stack.getLogicalId(construct.node.defaultChild as CfnElement);
  const envOf = (fnId: string) =>
    template.toJSON().Resources[fnId].Properties.Environment.Variables as Record<string, unknown>;
  const statementsOf = (role: unknown) =>
    Object.values(template.findResources('AWS::IAM::Policy', { Properties: { Roles: [role] } })).flatMap(
      (p) => p.Properties.PolicyDocument.Statement as Statement[],
    );
  const allows = (statements: Statement[], action: string, resource: unknown) =>
    statements.some(
      (s) =>
        s.Effect === 'Allow' &&
        [s.Action].flat().includes(action) &&
        [s.Resource].flat().some((r) => JSON.stringify(r) === JSON.stringify(resource)),
    );

  beforeAll(() => {
    stack = new LlmAlertPipelineStack(scratch.app, 'Escalating', {
      settings: {
        publicUrl: 'https://alerts.example.com',
        prometheusUrl: 'https://prometheus.example.com',
        alertmanagerUrl: 'https://am.example.com',
        grafanaUrl: 'https://grafana.example.com',
        logLevel: 'debug',
      },
      escalation: { delaySeconds: 600 },
    });
    template = Template.fromStack(stack);
  });
  afterAll(() => scratch.dispose());

  it('gives the receiver what it needs to schedule checks and nothing wider', () => {
    const esc = stack.escalation!;
    const env = envOf(id(stack.receiver.function));
    expect(env).toMatchObject({
      ESCALATION_SCHEDULE_GROUP: stack.resolve(esc.scheduleGroup.scheduleGroupName),
      ESCALATION_FUNCTION_ARN: { 'Fn::GetAtt': [id(esc.function), 'Arn'] },
      ESCALATION_ROLE_ARN: { 'Fn::GetAtt': [id(esc.schedulerRole), 'Arn'] },
      ESCALATION_DEAD_LETTER_QUEUE_ARN: { 'Fn::GetAtt': [id(esc.scheduleDeadLetters), 'Arn'] },
      ESCALATION_SNS_TOPIC_ARN: { Ref: id(stack.escalationTopic!) },
      ESCALATION_DELAY_SECONDS: '600',
      PUBLIC_URL: 'https://alerts.example.com',
    });
    const statements = statementsOf(stack.resolve(stack.receiver.function.role!.roleName));
    const group = stack.resolve(esc.scheduleGroup.scheduleGroupName) as string;
    expect(group).toMatch(/^[0-9A-Za-z_.-]{1,64}$/);
    const inGroup = statements.filter((s) => JSON.stringify(s.Resource).includes(`:schedule/${group}/*"`));
    expect(inGroup.flatMap((s) => [s.Action].flat()).sort()).toEqual([
      'scheduler:CreateSchedule',
      'scheduler:DeleteSchedule',
    ]);
    expect(allows(statements, 'iam:PassRole', { 'Fn::GetAtt': [id(esc.schedulerRole), 'Arn'] })).toBe(true);
    expect(allows(statements, 'sns:Publish', { Ref: id(stack.escalationTopic!) })).toBe(true);
    expect(statements.filter((s) => JSON.stringify(s.Resource) === '"*"')).toEqual([]);
  });

  it("lets only this account's Scheduler assume the role, which may only invoke the check and dead-letter it", () => {
    const esc = stack.escalation!;
    const role = template.toJSON().Resources[id(esc.schedulerRole)].Properties;
    expect(role.AssumeRolePolicyDocument.Statement).toEqual([
      {
        Action: 'sts:AssumeRole',
        Effect: 'Allow',
        Principal: { Service: 'scheduler.amazonaws.com' },
        Condition: { StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } } },
      },
    ]);
    const statements = statementsOf(stack.resolve(esc.schedulerRole.roleName));
    expect(statements.flatMap((s) => [s.Action].flat()).sort()).toEqual(['lambda:InvokeFunction', 'sqs:SendMessage']);
    const fnArn = { 'Fn::GetAtt': [id(esc.function), 'Arn'] };
    expect(allows(statements, 'lambda:InvokeFunction', fnArn)).toBe(true);
    expect(allows(statements, 'sqs:SendMessage', { 'Fn::GetAtt': [id(esc.scheduleDeadLetters), 'Arn'] })).toBe(true);
  });

  it("sends a check that still fails after Lambda's async retries to the failed-checks queue", () => {
    const esc = stack.escalation!;
    template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: id(esc.function) },
      MaximumRetryAttempts: 2,
      MaximumEventAgeInSeconds: 3600,
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [id(esc.failedChecks), 'Arn'] } } },
    });
    const role = stack.resolve(esc.function.role!.roleName);
    expect(allows(statementsOf(role), 'sqs:SendMessage', { 'Fn::GetAtt': [id(esc.failedChecks), 'Arn'] })).toBe(true);
  });

  it('runs the check (Node 24, arm64) with the table, the escalation topic, Alertmanager and the settings secret', () => {
    const esc = stack.escalation!;
    template.hasResourceProperties('AWS::Lambda::Function', {
      Runtime: 'nodejs24.x',
      Architectures: ['arm64'],
      Timeout: 60,
      MemorySize: 256,
      Handler: 'index.handler',
    });
    expect(envOf(id(esc.function))).toEqual({
      LOG_LEVEL: 'debug',
      PUBLIC_URL: 'https://alerts.example.com',
      // The check asks Prometheus and Alertmanager whether the alert is over before it escalates,
      // and Alertmanager whether it is silenced or inhibited.
      PROMETHEUS_URL: 'https://prometheus.example.com',
      ALERTMANAGER_URL: 'https://am.example.com',
      // The escalation message links the alert to the dashboard, as the first message did.
      GRAFANA_URL: 'https://grafana.example.com',
      TABLE_NAME: { Ref: id(stack.table) },
      ESCALATION_SNS_TOPIC_ARN: { Ref: id(stack.escalationTopic!) },
      SETTINGS_SECRET_ARN: { Ref: id(stack.settingsSecret) },
    });
    const statements = statementsOf(stack.resolve(esc.function.role!.roleName));
    expect(allows(statements, 'dynamodb:UpdateItem', { 'Fn::GetAtt': [id(stack.table), 'Arn'] })).toBe(true);
    expect(allows(statements, 'sns:Publish', { Ref: id(stack.escalationTopic!) })).toBe(true);
    expect(allows(statements, 'secretsmanager:GetSecretValue', { Ref: id(stack.settingsSecret) })).toBe(true);
    // Escalation's, and the follow-ups' (acknowledgements are on: publicUrl).
    template.resourceCountIs('AWS::Scheduler::ScheduleGroup', 2);
    template.hasOutput('EscalationTopicArn', { Value: { Ref: id(stack.escalationTopic!) } });
  });
});

describe('escalationFromContext', () => {
  const from = (context: Record<string, string>) => escalationFromContext((key) => context[key]);

  it('turns escalation on only when given, and names a bad value', () => {
    expect(from({})).toBeUndefined();
    expect(from({ escalationDelaySeconds: '900' })).toEqual({ delaySeconds: 900 });
    expect(() => from({ escalationDelaySeconds: 'soon' })).toThrow(
      /^escalationDelaySeconds: must be a positive number/,
    );
  });

  it('escalationChannels: instance names, each once; refused alone or when not a name', () => {
    expect(from({ escalationDelaySeconds: '900', escalationChannels: ' oncall-pd, oncall-feishu,oncall-pd ' })).toEqual(
      {
        delaySeconds: 900,
        channels: ['oncall-pd', 'oncall-feishu'],
      },
    );
    expect(() => from({ escalationChannels: 'oncall-pd' })).toThrow(
      /^escalationChannels: only with escalationDelaySeconds/,
    );
    expect(() => from({ escalationDelaySeconds: '900', escalationChannels: 'oncall pd' })).toThrow(
      /^escalationChannels: not a channel instance name: oncall pd/,
    );
  });
});

describe('definePipeline with escalation', () => {
  const ROUTING = fileURLToPath(new URL('./fixtures/routing-escalation.yml', import.meta.url));
  const withEscalation = (context: Record<string, string>) =>
    new App({ context: { escalationDelaySeconds: '900', publicUrl: 'https://alerts.example.com', ...context } });

  it('escalationChannels names instances of the routing file: without one, or a name not in it, synth stops', () => {
    expect(() => definePipeline(withEscalation({ escalationChannels: 'oncall-pagerduty' }))).toThrow(
      /^escalationChannels: names channel instances of the routing file: give routingFile too/,
    );
    expect(() =>
      definePipeline(withEscalation({ escalationChannels: 'oncall-pagerdty', routingFile: ROUTING })),
    ).toThrow(
      /^escalationChannels: no channel instance named "oncall-pagerdty" in .* \(known: team-slack, oncall-pagerduty\)/,
    );
  });

  it('names publicUrl when escalation is asked for without it (a user error, not a stack trace)', () => {
    const app = new App({ context: { escalationDelaySeconds: '900' } });
    expect(() => definePipeline(app)).toThrow(ContextError);
    expect(() => definePipeline(new App({ context: { escalationDelaySeconds: '900' } }))).toThrow(
      /^publicUrl: escalation \(escalationDelaySeconds\) needs it/,
    );
  });
});
