/**
 * The follow-up retries' wiring of the stack (`infra/follow-ups.ts`): with acknowledgements (context
 * `publicUrl`) a schedule group, a role only this account's EventBridge Scheduler may assume, a dead-letter
 * queue, and the receiver's `FOLLOW_UP_*` settings naming exactly those; without `publicUrl` (no
 * acknowledgement links, so no follow-ups) none of it. The grants are asserted in `iam.test.ts`.
 */
import type { CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LlmAlertPipelineStack } from '../../infra/stack.js';
import { scratchApp } from './synth.js';

describe('LlmAlertPipelineStack follow-up retries', () => {
  const scratch = scratchApp({ 'aws:cdk:bundling-stacks': [] });
  let stack: LlmAlertPipelineStack;
  let template: Template;
  let bare: Template;
  const id = (construct: { node: { defaultChild?: unknown } }) =>
    stack.getLogicalId(construct.node.defaultChild as CfnElement);
  const receiverEnv = (t: Template, s: LlmAlertPipelineStack) =>
    t.toJSON().Resources[s.getLogicalId(s.receiver.function.node.defaultChild as CfnElement)].Properties.Environment
      .Variables as Record<string, unknown>;

  beforeAll(() => {
    stack = new LlmAlertPipelineStack(scratch.app, 'Acknowledging', {
      settings: { publicUrl: 'https://alerts.example.com' },
    });
    const noLinks = new LlmAlertPipelineStack(scratch.app, 'NoLinks');
    template = Template.fromStack(stack);
    bare = Template.fromStack(noLinks);
    expect(noLinks.followUps).toBeUndefined();
    expect(Object.keys(receiverEnv(bare, noLinks)).filter((k) => k.startsWith('FOLLOW_UP_'))).toEqual([]);
  });
  afterAll(() => scratch.dispose());

  it('sets the receiver’s FOLLOW_UP_* settings to its own group, role and dead-letter queue', () => {
    const f = stack.followUps!;
    const env = receiverEnv(template, stack);
    // The group's name is fixed at synth (CDK names it), so the setting is the same string.
    expect(env.FOLLOW_UP_SCHEDULE_GROUP).toBe(template.toJSON().Resources[id(f.scheduleGroup)].Properties.Name);
    expect(env.FOLLOW_UP_ROLE_ARN).toEqual({ 'Fn::GetAtt': [id(f.schedulerRole), 'Arn'] });
    expect(env.FOLLOW_UP_DEAD_LETTER_QUEUE_ARN).toEqual({ 'Fn::GetAtt': [id(f.scheduleDeadLetters), 'Arn'] });
  });

  it('lets only EventBridge Scheduler of this account assume the role', () => {
    const role = template.toJSON().Resources[id(stack.followUps!.schedulerRole)];
    expect(role.Properties.AssumeRolePolicyDocument.Statement).toEqual([
      {
        Action: 'sts:AssumeRole',
        Effect: 'Allow',
        Principal: { Service: 'scheduler.amazonaws.com' },
        Condition: { StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } } },
      },
    ]);
  });

  it('makes no follow-up resources without acknowledgement links (no publicUrl)', () => {
    template.resourceCountIs('AWS::Scheduler::ScheduleGroup', 1);
    bare.resourceCountIs('AWS::Scheduler::ScheduleGroup', 0);
  });
});
