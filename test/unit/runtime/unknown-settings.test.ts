import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../shared/runtime/config.js';
import { unknownSettings } from '../../../shared/runtime/unknown-settings.js';

describe('unknown settings', () => {
  it('warns, naming the family, about a name that starts like ours but is none of them', () => {
    const { warnings } = loadConfig({
      SLACK_WEBHOK_URL: 'https://hooks.slack.com/services/T0/B0/x',
      PROMETHEUS_URI: 'x',
    });
    expect(warnings.map((w) => w.setting)).toEqual(['PROMETHEUS_URI', 'SLACK_WEBHOK_URL']);
    expect(warnings[1]!.problem).toMatch(/^not a setting this service reads, so it is ignored; a typo\? The SLACK_… /);
    expect(warnings[1]!.problem).toContain('SLACK_WEBHOOK_URL');
    // The value is never repeated.
    expect(JSON.stringify(warnings)).not.toContain('hooks.slack.com');
  });

  it("stays quiet about other software's settings, one-member prefixes and the known names", () => {
    const env = { PATH: '/bin', NODE_ENV: 'production', AWS_REGION: 'eu-west-1', LOG_FORMAT: 'json', TABLE_ARN: 'x' };
    expect(loadConfig({ ...env, LOG_LEVEL: 'debug', SLACK_CHANNEL: undefined }).warnings).toEqual([]);
  });

  it('counts the routing file’s secret names as known', () => {
    expect(
      unknownSettings({ SLACK_TEAM_URL: 'x', SLACK_OTHER: 'y' }, ['SLACK_A', 'SLACK_B', 'SLACK_TEAM_URL']),
    ).toEqual([expect.objectContaining({ setting: 'SLACK_OTHER' })]);
  });
});
