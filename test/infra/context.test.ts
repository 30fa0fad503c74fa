import { describe, expect, it } from 'vitest';
import { ContextError, settingsFromContext } from '../../infra/context.js';

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

  it('passes slackChannel (SLACK_CHANNEL) and refuses what is not a channel id or name', () => {
    expect(from({ slackChannel: 'C0ALERTS01' })).toEqual({ slackChannel: 'C0ALERTS01' });
    expect(() => from({ slackChannel: 'https://hooks.slack.com/x' })).toThrow(/^slackChannel: must be a Slack channel id/);
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
