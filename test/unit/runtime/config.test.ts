import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../shared/runtime/config.js';
import { envChannel, configProblems as problems } from '../../helpers/config.js';

describe('loadConfig', () => {
  it('has working defaults with nothing set', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      port: 8080,
      logLevel: 'info',
      enrichment: { timeoutMs: 2000, memoryTrendWindowHours: 6 },
      delivery: { timeoutMs: 5000, retries: 2 },
    });
    expect(c.envChannels).toEqual([]);
    expect(c.webhookToken).toBeUndefined();
  });

  it('names every bad setting, and never echoes a value', () => {
    const secretish = 'http://hooks.slack.com/services/T000/B000/SECRETVALUE';
    const found = problems({
      SLACK_WEBHOOK_URL: secretish,
      PORT: 'eighty',
      SNS_TOPIC_ARN: 'my-topic',
      PROMETHEUS_URL: 'prometheus:9090',
      WEBHOOK_TOKEN: 'short',
    });
    expect(found.map((p) => p.split(':')[0]).sort()).toEqual([
      'PORT',
      'PROMETHEUS_URL',
      'SLACK_WEBHOOK_URL',
      'SNS_TOPIC_ARN',
      'WEBHOOK_TOKEN',
    ]);
    expect(found.join('\n')).not.toContain('SECRETVALUE');
    expect(found.join('\n')).not.toContain('short');
    expect(found.find((p) => p.startsWith('SLACK_WEBHOOK_URL'))).toMatch(/https/);
  });

  it('allows plain http only to loopback', () => {
    expect(envChannel(loadConfig({ SLACK_WEBHOOK_URL: 'http://127.0.0.1:9999/hook' }), 'slack')).toBeDefined();
    expect(problems({ FEISHU_WEBHOOK_URL: 'http://open.feishu.cn/open-apis/bot/v2/hook/x' })[0]).toMatch(
      /^FEISHU_WEBHOOK_URL: /,
    );
  });

  it('refuses a webhook URL with a space or line break inside, without echoing it', () => {
    for (const url of [
      'https://open.feishu.cn/open-apis/bot/v2/hook/abc def',
      'https://hooks.slack.com/services/T0/B0/x\ny',
    ])
      expect(problems({ FEISHU_WEBHOOK_URL: url })).toEqual([
        'FEISHU_WEBHOOK_URL: must not contain spaces or line breaks (a value pasted in two parts?)',
      ]);
  });

  it('rejects a Feishu secret without a Feishu webhook', () => {
    expect(problems({ FEISHU_SECRET: 'abc' })).toEqual(['FEISHU_SECRET: set, but FEISHU_WEBHOOK_URL is not']);
  });

  it('rejects a token hono cannot carry in a bearer header', () => {
    expect(problems({ WEBHOOK_TOKEN: 'has spaces and !punctuation' })[0]).toMatch(/^WEBHOOK_TOKEN: .*characters/);
  });

  it('wraps secrets so they print redacted', () => {
    const c = loadConfig({
      WEBHOOK_TOKEN: 'tok-0123456789abcdef',
      FEISHU_WEBHOOK_URL: 'https://open.feishu.cn/hook/abc',
      FEISHU_SECRET: 'sssh',
    });
    const printed = [JSON.stringify(c), inspect(c, { depth: 5 }), `${c.webhookToken}`].join('\n');
    expect(printed).not.toMatch(/tok-0123|hook\/abc|sssh/);
    expect(printed).toContain('<redacted>');
    expect(envChannel(c, 'feishu')?.signingSecret?.reveal()).toBe('sssh');
  });

  it('refuses fractional milliseconds and seconds (timers refuse them)', () => {
    expect(
      problems({
        ENRICHMENT_TIMEOUT_MS: '2000.5',
        DELIVERY_TIMEOUT_MS: '1500.5',
        DEDUPE_TTL_SECONDS: '1.5',
        PROMETHEUS_QUERY_TIMEOUT_MS: '999.9',
      }).sort(),
    ).toEqual([
      'DEDUPE_TTL_SECONDS: must be a whole number of seconds 1–31536000',
      'DELIVERY_TIMEOUT_MS: must be a whole number of milliseconds 1–20000',
      'ENRICHMENT_TIMEOUT_MS: must be a whole number of milliseconds 1–20000',
      'PROMETHEUS_QUERY_TIMEOUT_MS: must be a whole number of milliseconds 1–20000',
    ]);
    expect(loadConfig({ MEMORY_TREND_WINDOW_HOURS: '0.5' }).enrichment.memoryTrendWindowHours).toBe(0.5);
  });

  it('refuses credentials in a base URL without echoing them', () => {
    const found = problems({ PROMETHEUS_URL: 'http://admin:hunter2@prometheus:9090' });
    expect(found).toEqual(['PROMETHEUS_URL: must not contain credentials (user:password@)']);
  });

  it('takes a PUBLIC_URL with a path prefix (a reverse proxy), but not with a query or fragment', () => {
    expect(loadConfig({ PUBLIC_URL: 'https://ops.example.com/alerts/' }).publicUrl).toBe(
      'https://ops.example.com/alerts',
    );
    for (const bad of ['https://ops.example.com/alerts?team=ml', 'https://ops.example.com/#/alerts']) {
      expect(problems({ PUBLIC_URL: bad })).toEqual([
        'PUBLIC_URL: must not have a query or fragment (links append /v1/ack/… to it); a path prefix is fine',
      ]);
    }
  });

  it('strips a trailing slash from base URLs', () => {
    expect(loadConfig({ PROMETHEUS_URL: 'http://127.0.0.1:9090/' }).prometheusUrl).toBe('http://127.0.0.1:9090');
  });
});

describe('loadConfig: watching the pipeline', () => {
  it('turns the heartbeat on by default (Watchdog, 600 s) and off with HEARTBEAT_ALERTNAME=""', () => {
    expect(loadConfig({}).heartbeat).toEqual({ alertname: 'Watchdog', timeoutSeconds: 600, maxClusters: 20 });
    expect(loadConfig({ HEARTBEAT_ALERTNAME: 'DeadMansSwitch', HEARTBEAT_TIMEOUT_SECONDS: '4' }).heartbeat).toEqual({
      alertname: 'DeadMansSwitch',
      timeoutSeconds: 4,
      maxClusters: 20,
    });
    expect(loadConfig({ HEARTBEAT_ALERTNAME: '' }).heartbeat).toBeUndefined();
  });

  it('recognises only the heartbeats configured (HEARTBEAT_EXTERNAL_URLS, HEARTBEAT_FINGERPRINTS, HEARTBEAT_MAX_CLUSTERS)', () => {
    const env = {
      HEARTBEAT_EXTERNAL_URLS: 'http://am-1:9093, https://am-2.example/, amp:arn:aws:sns:eu-west-1:123456789012:amp',
      HEARTBEAT_FINGERPRINTS: 'e0b1d0e8a1f2c3d4,',
      HEARTBEAT_MAX_CLUSTERS: '5',
    };
    expect(loadConfig(env).heartbeat).toMatchObject({
      externalUrls: ['http://am-1:9093', 'https://am-2.example/', 'amp:arn:aws:sns:eu-west-1:123456789012:amp'],
      fingerprints: ['e0b1d0e8a1f2c3d4'],
      maxClusters: 5,
    });
    expect(
      problems({
        HEARTBEAT_EXTERNAL_URLS: 'http://am-1:9093,am-2:9093',
        HEARTBEAT_FINGERPRINTS: 'alertname=Watchdog',
        HEARTBEAT_MAX_CLUSTERS: '0',
      }),
    ).toEqual([
      "HEARTBEAT_EXTERNAL_URLS: item 2: must be an Alertmanager's http(s) externalURL",
      "HEARTBEAT_FINGERPRINTS: item 1: must be an alert fingerprint, 16 hex digits (Alertmanager's API shows it)",
      'HEARTBEAT_MAX_CLUSTERS: must be a whole number of heartbeat alerts 1–1000',
    ]);
    expect(problems({ HEARTBEAT_ALERTNAME: '', HEARTBEAT_FINGERPRINTS: 'e0b1d0e8a1f2c3d4' })).toEqual([
      'HEARTBEAT_FINGERPRINTS: set, but HEARTBEAT_ALERTNAME="" turns heartbeats off',
    ]);
  });

  it('names bad heartbeat and authentication settings', () => {
    expect(
      problems({ HEARTBEAT_ALERTNAME: 'not a name', HEARTBEAT_TIMEOUT_SECONDS: '0', ALLOW_UNAUTHENTICATED: 'yes' }),
    ).toEqual([
      'ALLOW_UNAUTHENTICATED: must be true or false',
      'HEARTBEAT_ALERTNAME: must be an alert name (a Prometheus metric name), or "" to turn heartbeats off',
      'HEARTBEAT_TIMEOUT_SECONDS: must be a whole number of seconds 1–604800',
    ]);
    expect(problems({ WEBHOOK_TOKEN_PREVIOUS: 'previous-token-0123456789' })).toEqual([
      'WEBHOOK_TOKEN_PREVIOUS: set, but WEBHOOK_TOKEN is not (a rotation needs the new token too)',
    ]);
    expect(problems({ WEBHOOK_TOKEN: 'new-token-0123456789', WEBHOOK_TOKEN_PREVIOUS: 'short' })).toEqual([
      'WEBHOOK_TOKEN_PREVIOUS: must be at least 16 characters',
    ]);
  });

  it('refuses unauthenticated use unless ALLOW_UNAUTHENTICATED=true', () => {
    expect(loadConfig({}).allowUnauthenticated).toBe(false);
    expect(loadConfig({ ALLOW_UNAUTHENTICATED: 'true' }).allowUnauthenticated).toBe(true);
  });
});
