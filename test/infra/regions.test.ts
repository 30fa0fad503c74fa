/**
 * Regions without Lambda function URLs: the stack's list is cfn-lint's (its region data, asked through a
 * one-resource template across every region it knows), `cdk synth` stops for such a target region, and
 * the template refuses them with a rule for a deploy the synth could not foresee. A given AMP topic in
 * another region or account stops the synth too, naming `ampTopicArn`.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { App } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { ampFromContext, ContextError } from '../../infra/context.js';
import { definePipeline, RegionError } from '../../infra/pipeline.js';
import { FUNCTION_URL_UNSUPPORTED_REGIONS } from '../../infra/regions.js';
import { deployed } from './assembly/deployed.js';

describe('regions without function URLs', () => {
  it("are cfn-lint's list", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'url-regions-'));
    const file = join(dir, 'url.json');
    writeFileSync(
      file,
      JSON.stringify({
        Resources: {
          Url: {
            Type: 'AWS::Lambda::Url',
            Properties: { AuthType: 'NONE', TargetFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:f' },
          },
        },
      }),
    );
    try {
      const stdout = await promisify(execFile)(
        'cfn-lint',
        ['--format', 'json', '--regions', 'ALL_REGIONS', '--', file],
        {
          maxBuffer: 8 * 1024 * 1024,
        },
      ).then(
        (r) => r.stdout,
        (err: { code?: number; stdout?: string }) => {
          if (err.code === 1 || !err.stdout) throw err;
          return err.stdout;
        },
      );
      const unsupported = (JSON.parse(stdout) as { Rule: { Id: string }; Message: string }[])
        .filter((f) => f.Rule.Id === 'E3006')
        .flatMap((f) => /does not exist in '([a-z0-9-]+)'/.exec(f.Message)?.[1] ?? []);
      // cfn-lint also knows the isolated partitions; the stack lists the regions a user can deploy to.
      expect([...new Set(unsupported)].filter((r) => !/-iso[a-z]*-/.test(r)).sort()).toEqual(
        [...FUNCTION_URL_UNSUPPORTED_REGIONS].sort(),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('stop cdk synth when the CLI targets one, saying what to do', () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    expect(() => definePipeline(app, { region: 'ap-south-2' })).toThrow(RegionError);
    expect(() =>
      definePipeline(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), { region: 'ap-south-2' }),
    ).toThrow(/^ap-south-2 has no Lambda function URLs, .*deploy to another region/);
  });

  it('are refused by a rule of every template (for a deploy the synth could not foresee)', () => {
    const rule = deployed('default').template.Rules as Record<string, { Assertions: { Assert: unknown }[] }>;
    expect(rule.FunctionUrlRegion!.Assertions[0]!.Assert).toEqual({
      'Fn::Not': [{ 'Fn::Contains': [[...FUNCTION_URL_UNSUPPORTED_REGIONS], { Ref: 'AWS::Region' }] }],
    });
  });
});

describe('an ampTopicArn in another account or region', () => {
  const amp = (topicArn: string, target: { region?: string; account?: string }) =>
    ampFromContext((key) => ({ ampTopicArn: topicArn })[key], target);

  it('stops cdk synth when the target is known, naming ampTopicArn and what to do', () => {
    const arn = 'arn:aws:sns:us-east-1:123456789012:amp-alerts';
    expect(amp(arn, { region: 'us-east-1', account: '123456789012' })).toEqual({ topicArn: arn });
    expect(() => amp(arn, { region: 'eu-west-1' })).toThrow(ContextError);
    expect(() => amp(arn, { region: 'eu-west-1' })).toThrow(
      /^ampTopicArn: the topic is in region us-east-1, not eu-west-1 .*ampTopic=create/,
    );
    expect(() => amp(arn, { account: '210987654321' })).toThrow(
      /^ampTopicArn: the topic is in account 123456789012, not 210987654321/,
    );
  });

  it('is refused by a rule of the template when the target is not known at synth', () => {
    const rules = deployed('ampTopicGiven').template.Rules as Record<string, { Assertions: { Assert: unknown }[] }>;
    const [rule] = Object.entries(rules).filter(([id]) => id.startsWith('AmpTopicHere'));
    expect(rule![1].Assertions[0]!.Assert).toEqual({
      'Fn::And': [
        { 'Fn::Equals': [{ Ref: 'AWS::Region' }, 'eu-west-1'] },
        { 'Fn::Equals': [{ Ref: 'AWS::AccountId' }, '123456789012'] },
      ],
    });
  });
});
