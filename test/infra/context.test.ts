import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  ContextError,
  otherSettingsFromContext,
  refuseUnknownContextKeys,
  settingsFromContext,
  vpcFromContext,
} from '../../infra/context.js';
import { plainEnvironment } from '../../infra/receiver.js';
import { definePipeline } from '../../infra/pipeline.js';
import { App } from 'aws-cdk-lib';

const from = (context: Record<string, unknown>) => settingsFromContext((key) => context[key]);

describe('settingsFromContext', () => {
  it('leaves out settings that are unset or empty (cdk.json ships them as "")', () => {
    expect(from({ prometheusUrl: '', alertmanagerUrl: undefined })).toEqual({});
  });

  it('maps each given key and drops trailing slashes from URLs', () => {
    expect(
      from({
        prometheusUrl: 'https://prom.example.com/',
        alertmanagerUrl: 'http://am.internal:9093',
        publicUrl: 'https://alerts.example.com//',
        grafanaUrl: 'https://grafana.example.com/',
        logLevel: 'debug',
      }),
    ).toEqual({
      prometheusUrl: 'https://prom.example.com',
      alertmanagerUrl: 'http://am.internal:9093',
      publicUrl: 'https://alerts.example.com',
      grafanaUrl: 'https://grafana.example.com',
      logLevel: 'debug',
    });
  });

  it("refuses at synth every URL the function would refuse at start-up, in the function's words", () => {
    const refused: Record<string, [string, RegExp]> = {
      prometheusUrl: ['http://prom:9090/graph', /^prometheusUrl: must be the base URL, .* \/graph/],
      alertmanagerUrl: ['http://am:9093/api/v2', /^alertmanagerUrl: must be the base URL, .* \/api\/v2/],
      publicUrl: ['https://alerts.example.com/?x=1', /^publicUrl: must not have a query or fragment/],
      grafanaUrl: ['https://grafana.example.com/#frag', /^grafanaUrl: must not have a fragment/],
    };
    for (const [key, [value, message]] of Object.entries(refused)) {
      expect(() => from({ [key]: value }), key).toThrow(ContextError);
      expect(() => from({ [key]: value }), key).toThrow(message);
    }
    expect(() => from({ prometheusUrl: 'ftp://prom' })).toThrow(/^prometheusUrl: must be an http\(s\) URL/);
    expect(() => from({ publicUrl: 'https://user:pw@alerts.example.com' })).toThrow(/must not contain credentials/);
    // A path prefix stays fine, as at start-up.
    expect(from({ prometheusUrl: 'https://ops.example.com/prometheus/' })).toEqual({
      prometheusUrl: 'https://ops.example.com/prometheus',
    });
  });

  it('passes slackChannel (SLACK_CHANNEL) and refuses what is not a channel id or name', () => {
    expect(from({ slackChannel: 'C0ALERTS01' })).toEqual({ slackChannel: 'C0ALERTS01' });
    expect(() => from({ slackChannel: 'https://hooks.slack.com/x' })).toThrow(
      /^slackChannel: must be a Slack channel id/,
    );
  });

  it('passes the Feishu app (FEISHU_APP_ID, FEISHU_CHAT_ID, FEISHU_API_URL), refusing what is not one', () => {
    const feishu = {
      feishuAppId: 'cli_a5fb0ae6a4fake01',
      feishuChatId: 'oc_5ad11d72b830411d72b836c2',
      feishuApiUrl: 'https://open.larksuite.com/open-apis/',
    };
    expect(from(feishu)).toEqual(feishu);
    expect(() => from({ feishuAppId: 'my-app' })).toThrow(/^feishuAppId: must be the Feishu app's App ID/);
    expect(() => from({ feishuChatId: 'group' })).toThrow(/^feishuChatId: must be a Feishu chat_id/);
    expect(() => from({ feishuApiUrl: 'https://open.feishu.cn/' })).toThrow(/^feishuApiUrl: must be https:/);
  });

  it.each([
    ['prometheusUrl', 'prom.example.com:9090', /^prometheusUrl: must be an http\(s\) URL/],
    ['alertmanagerUrl', 'ftp://am.example.com', /^alertmanagerUrl: must be an http\(s\) URL/],
    ['grafanaUrl', 'grafana.example.com', /^grafanaUrl: must be an http\(s\) URL/],
    ['logLevel', 'verbose', /^logLevel: must be one of debug, info, warn, error/],
    ['publicUrl', 42, /^publicUrl: must be a string/],
  ])('rejects %s = %j, naming the key', (key, value, message) => {
    expect(() => from({ [key]: value })).toThrow(ContextError);
    expect(() => from({ [key]: value })).toThrow(message);
  });
});

describe('otherSettingsFromContext (context settings)', () => {
  const other = (settings: unknown) => otherSettingsFromContext((key) => (key === 'settings' ? settings : undefined));

  it('takes a JSON object from -c, or an object from cdk.json; values as the functions read them', () => {
    expect(other(undefined)).toBeUndefined();
    expect(other('{"TIME_ZONE":"Asia/Shanghai","HEARTBEAT_FINGERPRINTS":"0123456789abcdef"}')).toEqual({
      TIME_ZONE: 'Asia/Shanghai',
      HEARTBEAT_FINGERPRINTS: '0123456789abcdef',
    });
    expect(other({ DELIVERY_RETRIES: 3, FEISHU_KEYWORD: ' 告警 ' })).toEqual({
      DELIVERY_RETRIES: '3',
      FEISHU_KEYWORD: '告警',
    });
    expect(from({ settings: '{"TIME_ZONE":"Asia/Shanghai"}' })).toEqual({ other: { TIME_ZONE: 'Asia/Shanghai' } });
  });

  it('refuses, naming the setting: not JSON, unknown, secret, its own key, set by the stack, a bad value', () => {
    const refused: [unknown, RegExp][] = [
      ['TIME_ZONE=Asia/Shanghai', /^settings: must be a JSON object/],
      ['["TIME_ZONE"]', /^settings: must be a JSON object/],
      [{ TIME_ZONE: { zone: 'UTC' } }, /^settings: TIME_ZONE: the value must be a string/],
      [{ TIMEZONE: 'UTC' }, /^settings: TIMEZONE: not a setting of the functions/],
      [{ ACK_SECRET: 'x'.repeat(40) }, /^settings: ACK_SECRET: a secret setting: put it in the settings secret/],
      [{ SLACK_WEBHOOK_URL: 'https://hooks.slack.com/x' }, /^settings: SLACK_WEBHOOK_URL: a secret setting/],
      [{ PROMETHEUS_URL: 'http://prom:9090' }, /^settings: PROMETHEUS_URL: give it with the context key prometheusUrl/],
      [
        { ESCALATION_CHANNELS: 'pd' },
        /^settings: ESCALATION_CHANNELS: give it with the context key escalationChannels/,
      ],
      [{ TABLE_NAME: 'mine' }, /^settings: TABLE_NAME: the stack sets it/],
      [{ DATA_DIR: '/var/lib/x' }, /^settings: DATA_DIR: the stack sets it: nothing: npm start's embedded store only/],
      [{ TIME_ZONE: 'CST' }, /^settings: TIME_ZONE: .*Area\/City/],
      [{ DELIVERY_RETRIES: 'many' }, /^settings: DELIVERY_RETRIES: /],
    ];
    for (const [given, problem] of refused) {
      expect(() => other(given), JSON.stringify(given)).toThrow(ContextError);
      expect(() => other(given), JSON.stringify(given)).toThrow(problem);
    }
    // A secret is never told to go where it was just refused from.
    expect(() => other({ PAGERDUTY_ROUTING_KEY: 'R'.repeat(32) })).not.toThrow(/-c settings=/);
  });

  it('stops synth on what start-up would refuse across settings, naming the setting given', () => {
    const synth = (context: Record<string, string>) => () => definePipeline(new App({ context }));
    expect(synth({ settings: '{"PROMETHEUS_SIGV4_REGION":"eu-west-1"}' })).toThrow(
      /^settings: PROMETHEUS_SIGV4_REGION: set, but PROMETHEUS_URL is not/,
    );
    expect(synth({ settings: '{"PROMETHEUS_QUERY_TIMEOUT_MS":5000}' })).toThrow(
      /^settings: PROMETHEUS_QUERY_TIMEOUT_MS: must not exceed ENRICHMENT_TIMEOUT_MS/,
    );
    expect(
      synth({
        ampWorkspaceArn: 'arn:aws:aps:eu-west-1:123456789012:workspace/ws-0123abcd-4567-89ef-0123-456789abcdef',
        settings: '{"PROMETHEUS_SIGV4_REGION":"us-east-1"}',
      }),
    ).toThrow(/^settings: PROMETHEUS_SIGV4_REGION: ampWorkspaceArn sets it/);
  });

  it("refuses a routing file's secret reference named like a plain setting (its value could come from the template)", () => {
    const dir = mkdtempSync(join(tmpdir(), 'routing-clash-'));
    const file = join(dir, 'routing.yml');
    writeFileSync(
      file,
      'channels:\n  hook: { type: slack, webhookUrl: { secret: MEMORY_SERIES } }\ndefault:\n  channels: [hook]\n',
    );
    try {
      expect(() => definePipeline(new App({ context: { routingFile: file } }))).toThrow(
        /^routingFile: .*\{ secret: MEMORY_SERIES \} names a plain setting of the functions/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps a value "" as given: HEARTBEAT_ALERTNAME="" turns heartbeats off in both functions', () => {
    expect(other({ HEARTBEAT_ALERTNAME: '' })).toEqual({ HEARTBEAT_ALERTNAME: '' });
    expect(plainEnvironment({ logLevel: undefined, other: { HEARTBEAT_ALERTNAME: '' } })).toEqual({
      HEARTBEAT_ALERTNAME: '',
    });
  });
});

describe('vpcFromContext', () => {
  const vpc = (context: Record<string, unknown>) => vpcFromContext((key) => context[key]);

  it('is off without vpcId, and refuses the other VPC keys alone, naming them', () => {
    expect(vpc({})).toBeUndefined();
    expect(() => vpc({ vpcSubnetIds: 'subnet-0123456789abcdef0' })).toThrow(/^vpcSubnetIds: only with vpcId/);
  });

  it('stops at vpcId without subnets, naming vpcSubnetIds and what to give', () => {
    expect(() => vpc({ vpcId: 'vpc-0123456789abcdef0' })).toThrow(ContextError);
    expect(() => vpc({ vpcId: 'vpc-0123456789abcdef0' })).toThrow(
      /^vpcSubnetIds: vpcId needs the subnets .* -c vpcSubnetIds=subnet-/,
    );
  });

  it('splits the id lists and refuses a malformed id, naming the key and the id', () => {
    expect(
      vpc({
        vpcId: 'vpc-0123456789abcdef0',
        vpcSubnetIds: 'subnet-0123456789abcdef0, subnet-0123456789abcdef1',
        vpcInterfaceEndpoints: 'true',
      }),
    ).toEqual({
      vpcId: 'vpc-0123456789abcdef0',
      subnetIds: ['subnet-0123456789abcdef0', 'subnet-0123456789abcdef1'],
      securityGroupIds: undefined,
      routeTableIds: undefined,
      interfaceEndpoints: true,
    });
    expect(() =>
      vpc({ vpcId: 'vpc-0123456789abcdef0', vpcSubnetIds: 'subnet-0123456789abcdef0,sg-0123456789abcdef0' }),
    ).toThrow(/^vpcSubnetIds: not an id .*: sg-0123456789abcdef0/);
  });
});

describe('refuseUnknownContextKeys', () => {
  it('refuses a plain key the stack does not read, naming the key it differs from in case', () => {
    expect(() => refuseUnknownContextKeys(['prometheusURL'])).toThrow(
      /^prometheusURL: not a context key this stack reads; did you mean prometheusUrl\?/,
    );
    expect(() => refuseUnknownContextKeys(['escalationDelay'])).toThrow(/^escalationDelay: not a context key/);
  });

  it("passes every key the readers ask for and CDK's own keys", () => {
    expect(() =>
      refuseUnknownContextKeys([
        'prometheusUrl',
        'escalationDelaySeconds',
        'vpcSubnetIds',
        'ampWorkspaceArn',
        'routingFile',
        'alarmEmail',
        'escalationChannels',
        'settings',
        '@aws-cdk/core:checkSecretUsage',
        'aws:cdk:enable-path-metadata',
        'availability-zones:account=123456789012:region=eu-west-1',
      ]),
    ).not.toThrow();
  });
});
