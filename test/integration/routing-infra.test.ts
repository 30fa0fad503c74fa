/**
 * The routing file in the CDK deployment: checked at synth, bundled next to the handler, named by
 * ROUTING_FILE, publish granted on the topics it names, and no secret in the template.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { Asset } from 'aws-cdk-lib/aws-s3-assets';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AlertReceiver } from '../../infra/receiver.js';
import { LAMBDA_ROUTING_FILE } from '../../infra/routing.js';
import { LlmAlertPipelineStack } from '../../infra/stack.js';
import { RoutingError } from '../../shared/routing/load.js';
import { scratchApp } from '../infra/synth.js';

const EXAMPLE = fileURLToPath(new URL('../../infra/routing.example.yml', import.meta.url));
const PROBE = fileURLToPath(new URL('../infra/fixtures/entry.ts', import.meta.url));
const AUDIT_TOPIC = 'arn:aws:sns:us-east-1:123456789012:llm-audit';

const dir = mkdtempSync(join(tmpdir(), 'routing-infra-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('AlertReceiver with a routing file (bundled with local esbuild)', () => {
  const scratch = scratchApp();
  let bundleDir: string;
  let env: Record<string, unknown>;
  beforeAll(() => {
    const stack = new Stack(scratch.app, 'RoutingProbe');
    const receiver = new AlertReceiver(stack, 'Receiver', { entry: PROBE, routingFile: EXAMPLE });
    bundleDir = `${scratch.outdir}/${(receiver.function.node.findChild('Code') as Asset).assetPath}`;
    const fn = Object.values(Template.fromStack(stack).findResources('AWS::Lambda::Function'))[0]!;
    env = fn.Properties.Environment.Variables;
  });
  afterAll(() => scratch.dispose());

  it('copies the file into the bundle as routing.yml and points ROUTING_FILE at it', () => {
    expect(readFileSync(`${bundleDir}/routing.yml`, 'utf8')).toBe(readFileSync(EXAMPLE, 'utf8'));
    expect(env.ROUTING_FILE).toBe(LAMBDA_ROUTING_FILE);
    expect(LAMBDA_ROUTING_FILE).toBe('/var/task/routing.yml');
  });
});

describe('LlmAlertPipelineStack with a routing file', () => {
  const scratch = scratchApp({ 'aws:cdk:bundling-stacks': [] });
  afterAll(() => scratch.dispose());

  it('allows publishing to the topics the file names, lists the secret keys it expects, and holds no secret', () => {
    const file = join(dir, 'routing.yml');
    writeFileSync(
      file,
      `channels:
  pager: { type: sns }
  audit: { type: sns, topicArn: ${AUDIT_TOPIC} }
  platform: { type: slack, webhookUrl: { secret: SLACK_PLATFORM_WEBHOOK_URL } }
default: { channels: [pager, audit, platform] }
`,
    );
    const stack = new LlmAlertPipelineStack(scratch.app, 'Routed', { routingFile: file });
    const template = Template.fromStack(stack);
    const statements = Object.values(template.findResources('AWS::IAM::Policy')).flatMap(
      (p) =>
        p.Properties.PolicyDocument.Statement as { Effect: string; Action: string | string[]; Resource: unknown }[],
    );
    expect(statements).toContainEqual({ Effect: 'Allow', Action: 'sns:Publish', Resource: AUDIT_TOPIC });
    template.hasOutput('RoutingSecretKeys', { Value: 'SLACK_PLATFORM_WEBHOOK_URL' });
    const vars = Object.values(template.findResources('AWS::Lambda::Function'))[0]!.Properties.Environment
      .Variables as Record<string, unknown>;
    expect(vars.ROUTING_FILE).toBe(LAMBDA_ROUTING_FILE);
    expect(Object.keys(vars)).not.toContain('SLACK_PLATFORM_WEBHOOK_URL');
    expect(JSON.stringify(template.toJSON())).not.toMatch(/hooks\.slack\.com|resolve:secretsmanager/);
  });

  it('fails synth on a bad routing file, naming its line and field', () => {
    const file = join(dir, 'bad.yml');
    writeFileSync(
      file,
      'channels:\n  platform: { type: slack, webhookUrl: "https://hooks.slack.com/services/T/B/x" }\ndefault: { channels: [platform] }\n',
    );
    expect(() => new LlmAlertPipelineStack(scratch.app, 'Bad', { routingFile: file })).toThrow(RoutingError);
    expect(() => new LlmAlertPipelineStack(scratch.app, 'Bad2', { routingFile: file })).toThrow(
      /bad\.yml:2: channels\.platform\.webhookUrl/,
    );
  });
});
