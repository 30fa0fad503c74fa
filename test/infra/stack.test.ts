import { readFileSync } from 'node:fs';
import { Match, Template } from 'aws-cdk-lib/assertions';
import type { CfnElement } from 'aws-cdk-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Runtime } from 'aws-cdk-lib/aws-lambda';
import { LAMBDA_NODE_MAJOR, LAMBDA_RUNTIME } from '../../infra/node-function.js';
import { SECRET_SETTING_KEYS } from '../../infra/receiver.js';
import { LlmAlertPipelineStack } from '../../infra/stack.js';
import { scratchApp } from './synth.js';

interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
}

const PACKAGE = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  engines: { node: string };
};

const PLAIN_ENV = [
  'LOG_LEVEL',
  'PROMETHEUS_URL',
  'ALERTMANAGER_URL',
  'PUBLIC_URL',
  'GRAFANA_URL',
  'SLACK_CHANNEL',
  'FEISHU_APP_ID',
  'FEISHU_CHAT_ID',
  'FEISHU_API_URL',
  'TABLE_NAME',
  'SNS_TOPIC_ARN',
  'SETTINGS_SECRET_ARN',
];

// Bundles the real Lambda entry (functions/lambda.ts) with local esbuild.
describe('LlmAlertPipelineStack', () => {
  const scratch = scratchApp();
  let stack: LlmAlertPipelineStack;
  let template: Template;
  let env: Record<string, unknown>;
  let statements: Statement[];
  const id = (construct: { node: { defaultChild?: unknown } }) =>
    stack.getLogicalId(construct.node.defaultChild as CfnElement);

  beforeAll(() => {
    stack = new LlmAlertPipelineStack(scratch.app, 'Pipeline', {
      settings: {
        prometheusUrl: 'https://prom.example.com',
        alertmanagerUrl: 'https://am.example.com',
        grafanaUrl: 'https://grafana.example.com',
        logLevel: 'debug',
        slackChannel: 'C0ALERTS01',
      },
    });
    template = Template.fromStack(stack);
    const fn = Object.values(template.findResources('AWS::Lambda::Function'))[0]!;
    env = fn.Properties.Environment.Variables;
    const roleRef = stack.resolve(stack.receiver.function.role!.roleName);
    statements = Object.values(
      template.findResources('AWS::IAM::Policy', { Properties: { Roles: [roleRef] } }),
    ).flatMap((p) => p.Properties.PolicyDocument.Statement as Statement[]);
  });
  afterAll(() => scratch.dispose());

  /** Whether the function's role allows `action` on exactly `resource` (a Ref / Fn::GetAtt). */
  const allows = (action: string, resource: unknown) =>
    statements.some(
      (s) =>
        s.Effect === 'Allow' &&
        [s.Action].flat().includes(action) &&
        [s.Resource].flat().some((r) => JSON.stringify(r) === JSON.stringify(resource)),
    );

  it('runs Node 24 on arm64 with 512 MiB, a 30 s timeout and no reserved concurrency', () => {
    template.hasResourceProperties('AWS::Lambda::Function', {
      Runtime: 'nodejs24.x',
      Architectures: ['arm64'],
      MemorySize: 512,
      Timeout: 30,
      Handler: 'index.handler',
      ReservedConcurrentExecutions: Match.absent(),
    });
  });

  it('runs the newest Node.js runtime this aws-cdk-lib offers, a major `engines` supports', () => {
    const major = (name: string) => Number(/^nodejs(\d+)\.x$/.exec(name)?.[1] ?? 0);
    const newest = Math.max(...Runtime.ALL.map((r) => major(r.name)));
    expect(LAMBDA_RUNTIME.name).toBe(`nodejs${newest}.x`);
    expect(LAMBDA_NODE_MAJOR).toBe(newest);
    expect(PACKAGE.engines.node.split('||').map((range) => range.trim())).toContain(`^${LAMBDA_NODE_MAJOR}.0.0`);
  });

  it('keys the dedupe table on pk alone, on demand, with TTL on expiresAt, PITR and Retain', () => {
    template.hasResource('AWS::DynamoDB::Table', {
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
      Properties: {
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
        BillingMode: 'PAY_PER_REQUEST',
        TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      },
    });
  });

  it('lets the function send the item actions the stores use, on that table only (exact set: iam.test.ts)', () => {
    const tableArn = { 'Fn::GetAtt': [id(stack.table), 'Arn'] };
    for (const action of [
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
      'dynamodb:BatchGetItem',
      'dynamodb:BatchWriteItem',
    ]) {
      expect(allows(action, tableArn), action).toBe(true);
    }
    const dynamodb = statements.flatMap((s) => [s.Action].flat()).filter((a) => a.startsWith('dynamodb:'));
    expect([...new Set(dynamodb)].sort()).toEqual([
      'dynamodb:BatchGetItem',
      'dynamodb:BatchWriteItem',
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
    ]);
  });

  it('lets the function publish to the alert topic and read the settings secret', () => {
    expect(allows('sns:Publish', { Ref: id(stack.topic) })).toBe(true);
    expect(allows('secretsmanager:GetSecretValue', { Ref: id(stack.settingsSecret) })).toBe(true);
  });

  it('grants nothing on a wildcard resource', () => {
    expect(statements.length).toBeGreaterThan(0);
    expect(statements.filter((s) => JSON.stringify(s.Resource).includes('"*"'))).toEqual([]);
  });

  it('passes the table, topic and secret as references, not literals', () => {
    expect(env.TABLE_NAME).toEqual({ Ref: id(stack.table) });
    expect(env.SNS_TOPIC_ARN).toEqual({ Ref: id(stack.topic) });
    expect(env.SETTINGS_SECRET_ARN).toEqual({ Ref: id(stack.settingsSecret) });
  });

  it('passes the given plain settings as environment variables', () => {
    expect(env).toMatchObject({
      PROMETHEUS_URL: 'https://prom.example.com',
      ALERTMANAGER_URL: 'https://am.example.com',
      GRAFANA_URL: 'https://grafana.example.com',
      LOG_LEVEL: 'debug',
      SLACK_CHANNEL: 'C0ALERTS01',
    });
    expect(env.PUBLIC_URL).toBeUndefined();
  });

  it("reads the Slack app's bot token and signing secret from the settings secret", () => {
    expect(SECRET_SETTING_KEYS).toEqual(expect.arrayContaining(['SLACK_BOT_TOKEN', 'SLACK_SIGNING_SECRET']));
  });

  it("reads the Feishu app's secret and its callback's keys from the settings secret", () => {
    const feishu = ['FEISHU_APP_SECRET', 'FEISHU_ENCRYPT_KEY', 'FEISHU_VERIFICATION_TOKEN'];
    expect(SECRET_SETTING_KEYS).toEqual(expect.arrayContaining(feishu));
  });

  it("reads DingTalk's and WeCom's webhook URLs and DingTalk's signing secret from the settings secret", () => {
    const robots = ['DINGTALK_WEBHOOK_URL', 'DINGTALK_SECRET', 'WECOM_WEBHOOK_URL'];
    expect(SECRET_SETTING_KEYS).toEqual(expect.arrayContaining(robots));
    const [secret] = Object.values(template.findResources('AWS::SecretsManager::Secret'));
    expect((secret as { Properties: { Description: string } }).Properties.Description.split(', ')).toEqual(
      expect.arrayContaining(robots),
    );
  });

  it("names every key the functions read in the settings secret's description", () => {
    const [secret] = Object.values(template.findResources('AWS::SecretsManager::Secret'));
    const description = (secret as { Properties: { Description: string } }).Properties.Description;
    const listed = description.replace(/^[^:]*: /, '').split(', ');
    expect([...listed].sort()).toEqual([...SECRET_SETTING_KEYS].sort());
    expect(listed).toEqual(
      expect.arrayContaining(['ESCALATION_SLACK_WEBHOOK_URL', 'ACK_SECRET_PREVIOUS', 'PAGERDUTY_ROUTING_KEY']),
    );
    // Secrets Manager's limit on a description.
    expect(description.length).toBeLessThanOrEqual(2048);
  });

  it('puts no secret in the environment, neither by name nor as a dynamic reference', () => {
    const names = Object.keys(env);
    expect(names.filter((n) => !PLAIN_ENV.includes(n))).toEqual([]);
    expect(names.filter((n) => (SECRET_SETTING_KEYS as readonly string[]).includes(n))).toEqual([]);
    expect(JSON.stringify(env)).not.toMatch(/resolve:secretsmanager|SecretString/);
  });

  it('generates a 40-character WEBHOOK_TOKEN in an otherwise empty settings secret', () => {
    template.hasResourceProperties('AWS::SecretsManager::Secret', {
      GenerateSecretString: {
        SecretStringTemplate: '{}',
        GenerateStringKey: 'WEBHOOK_TOKEN',
        ExcludePunctuation: true,
        PasswordLength: 40,
      },
    });
  });

  it('serves a public Function URL (the app checks the bearer token) and outputs the webhook endpoint', () => {
    const fnArn = stack.resolve(stack.receiver.function.functionArn);
    template.hasResourceProperties('AWS::Lambda::Url', { AuthType: 'NONE', TargetFunctionArn: fnArn });
    template.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunctionUrl',
      FunctionUrlAuthType: 'NONE',
      Principal: '*',
    });
    const urlId = stack.getLogicalId(stack.receiver.functionUrl.node.defaultChild as CfnElement);
    template.hasOutput('WebhookUrl', {
      Value: { 'Fn::Join': ['', [{ 'Fn::GetAtt': [urlId, 'FunctionUrl'] }, 'v1/alertmanager']] },
    });
    template.hasOutput('AlertTopicArn', { Value: { Ref: id(stack.topic) } });
  });

  it('logs to its own log group kept for 30 days', () => {
    template.hasResourceProperties('AWS::Logs::LogGroup', { RetentionInDays: 30 });
    template.hasResourceProperties('AWS::Lambda::Function', {
      LoggingConfig: { LogGroup: { Ref: id(stack.receiver.logGroup) } },
    });
  });

  it('is environment-agnostic, so synth needs no AWS account', () => {
    expect(stack.environment).toBe('aws://unknown-account/unknown-region');
    expect(JSON.stringify(template.toJSON())).not.toMatch(/\b\d{12}\b/);
  });
});

describe('LlmAlertPipelineStack without settings', () => {
  // Bundling is skipped here: this case only checks which variables are set.
  const scratch = scratchApp({ 'aws:cdk:bundling-stacks': [] });
  afterAll(() => scratch.dispose());

  it('sets no plain setting that was not given', () => {
    const template = Template.fromStack(new LlmAlertPipelineStack(scratch.app, 'Bare'));
    const vars = Object.values(template.findResources('AWS::Lambda::Function'))[0]!.Properties.Environment.Variables;
    expect(Object.keys(vars).sort()).toEqual(['SETTINGS_SECRET_ARN', 'SNS_TOPIC_ARN', 'TABLE_NAME']);
  });
});
