/**
 * The heartbeat check's wiring (infra/heartbeat.ts): an EventBridge Scheduler rate schedule that
 * invokes the receiver with the check event, through a role that may invoke that function only.
 */
import type { CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HEARTBEAT_CHECK_EVENT } from '../../shared/heartbeat/event.js';
import { LlmAlertPipelineStack } from '../../infra/stack.js';
import { scratchApp } from './synth.js';

interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
}

describe('LlmAlertPipelineStack heartbeat check', () => {
  // Bundling is skipped: this checks the schedule and its rights, not the code.
  const scratch = scratchApp({ 'aws:cdk:bundling-stacks': [] });
  let stack: LlmAlertPipelineStack;
  let template: Template;
  beforeAll(() => {
    stack = new LlmAlertPipelineStack(scratch.app, 'Watched');
    template = Template.fromStack(stack);
  });
  afterAll(() => scratch.dispose());

  it('invokes the receiver every minute with the check event, without retries that would pile up', () => {
    const schedules = Object.values(template.findResources('AWS::Scheduler::Schedule'));
    expect(schedules).toHaveLength(1);
    const props = schedules[0]!.Properties;
    expect(props.ScheduleExpression).toBe('rate(1 minute)');
    expect(props.Target.Arn).toEqual(stack.resolve(stack.receiver.function.functionArn));
    expect(JSON.parse(props.Target.Input)).toEqual(HEARTBEAT_CHECK_EVENT);
    expect(props.Target.RetryPolicy).toMatchObject({ MaximumRetryAttempts: 0 });
  });

  it('runs as a role Scheduler assumes that may only invoke the receiver', () => {
    const props = Object.values(template.findResources('AWS::Scheduler::Schedule'))[0]!.Properties;
    const roleId = (props.Target.RoleArn as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
    const role = template.toJSON().Resources[roleId];
    expect(JSON.stringify(role.Properties.AssumeRolePolicyDocument)).toContain('scheduler.amazonaws.com');
    const statements = Object.values(
      template.findResources('AWS::IAM::Policy', { Properties: { Roles: [{ Ref: roleId }] } }),
    ).flatMap((p) => p.Properties.PolicyDocument.Statement as Statement[]);
    expect(statements.flatMap((s) => [s.Action].flat())).toEqual(['lambda:InvokeFunction']);
    const fnId = stack.getLogicalId(stack.receiver.function.node.defaultChild as CfnElement);
    for (const resource of statements.flatMap((s) => [s.Resource].flat()))
      expect(JSON.stringify(resource)).toContain(fnId);
  });
});
