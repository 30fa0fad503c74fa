/**
 * cdk-nag's AwsSolutions and Serverless packs over the whole stack, in its two shapes (default, and
 * with escalation, a routing file and the alarm e-mail): no finding may be left unexplained. Each
 * finding we accept is acknowledged on its resource with the reason, and the list below names them
 * all, so a new acknowledgment shows up in review as a change to this file.
 */
import { Validations } from 'aws-cdk-lib';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { nagPacks } from '../../infra/nag.js';
import { LlmAlertPipelineStack, type LlmAlertPipelineStackProps } from '../../infra/stack.js';
import { scratchApp } from './synth.js';

const ROUTING = fileURLToPath(new URL('./fixtures/routing-audit.yml', import.meta.url));

const SHAPES: [string, LlmAlertPipelineStackProps][] = [
  ['default', {}],
  ['escalation, routing file, alarm e-mail', { escalation: { delaySeconds: 600 }, routingFile: ROUTING, alarmEmail: 'oncall@example.com' }],
];

/** `rule path` of every finding the packs report (the path below the stack). */
function findings(stack: LlmAlertPipelineStack): string[] {
  return nagPacks().flatMap((pack) =>
    pack.validateScope(stack).violations.flatMap((v) => v.violatingResources.map((r) => `${v.ruleName} ${(r.constructPath ?? '?').replace(`${stack.node.path}/`, '')}`)),
  );
}

/** Every acknowledgment in the stack: the rule, where (below the stack) and why. */
function acknowledgments(stack: LlmAlertPipelineStack): { rule: string; path: string; reason: string }[] {
  return stack.node.findAll().flatMap((c) =>
    c.node.metadata
      .filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((m) => Object.entries(m.data as Record<string, string>))
      .map(([rule, reason]) => ({ rule: rule.replace(/^annotation::/i, ''), path: c.node.path.replace(`${stack.node.path}/`, ''), reason })),
  );
}

describe('cdk-nag (AwsSolutions, Serverless)', () => {
  const scratch = scratchApp({ 'aws:cdk:bundling-stacks': [] });
  afterAll(() => scratch.dispose());
  const stacks = new Map(SHAPES.map(([name, props], i) => [name, new LlmAlertPipelineStack(scratch.app, `Nag${i}`, props)]));

  it.each(SHAPES.map(([name]) => name))('finds nothing unacknowledged in the %s stack', (name) => {
    expect(findings(stacks.get(name)!)).toEqual([]);
  });

  it('acknowledges exactly these findings, each with its reason', () => {
    const stack = stacks.get('escalation, routing file, alarm e-mail')!;
    const group = stack.resolve(stack.escalation!.scheduleGroup.scheduleGroupName) as string;
    const acks = acknowledgments(stack);
    expect(acks.map((a) => `${a.rule} ${a.path}`).sort()).toEqual([
      'AwsSolutions-SMG4 SettingsSecret',
      'Serverless-LambdaDLQ Receiver/Function',
      'Serverless-LambdaDLQ Escalation/Function',
      'Serverless-LambdaTracing Receiver/Function',
      'Serverless-LambdaTracing Escalation/Function',
      `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule/${group}/*] Receiver/Function`,
      'AwsSolutions-SQS3 Escalation/FailedChecks',
      'Serverless-SQSRedrivePolicy Escalation/FailedChecks',
      'AwsSolutions-SQS3 Escalation/ScheduleDeadLetters',
      'Serverless-SQSRedrivePolicy Escalation/ScheduleDeadLetters',
    ].sort());
    for (const a of acks) expect(a.reason.length, `${a.rule} ${a.path}: a reason a reviewer can check`).toBeGreaterThanOrEqual(40);
  });
});
