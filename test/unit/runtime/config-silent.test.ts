/**
 * Settings that used to be accepted silently (breakit `settings-probe.ts`, `routing-empty.yml`): each
 * is refused at start, naming the setting (or the routing file's field) and never echoing a value.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../shared/runtime/config.js';
import { configProblems as problems } from '../../helpers/config.js';

const dir = mkdtempSync(join(tmpdir(), 'config-silent-'));
function routingFile(text: string): string {
  const file = join(dir, `routing-${Math.random().toString(36).slice(2)}.yml`);
  writeFileSync(file, text);
  return file;
}
const SLACK = 'https://hooks.slack.com/services/TSIL00001/BSIL00002/SilentSecret111';
const ACK = { PUBLIC_URL: 'https://alerts.example.com', ACK_SECRET: 'a'.repeat(32) };

describe('routing that sends an alert nowhere', () => {
  it('refuses default: { channels: [] } and a route with channels: [], naming the field', () => {
    const file = routingFile(
      [
        'channels:',
        '  team-slack: { type: slack, webhookUrl: { secret: SLACK_TEAM_URL } }',
        'routes:',
        '  - matchers: [\'severity="critical"\']',
        '    channels: [team-slack]',
        '  - matchers: [\'team="ml"\']',
        '    channels: []',
        'default:',
        '  channels: []',
        '',
      ].join('\n'),
    );
    const found = problems({ ROUTING_FILE: file, SLACK_TEAM_URL: SLACK });
    expect(found).toEqual([
      expect.stringMatching(new RegExp(`^ROUTING_FILE: ${file}:7: routes\\[1\\]\\.channels: names no channel`)),
      expect.stringMatching(new RegExp(`^ROUTING_FILE: ${file}:9: default\\.channels: names no channel`)),
    ]);
  });
});

describe('escalation nobody can stop', () => {
  it.each<Record<string, string>>([
    { ESCALATION_SLACK_WEBHOOK_URL: SLACK },
    { ESCALATION_SNS_TOPIC_ARN: 'arn:aws:sns:eu-west-1:123456789012:esc' },
  ])('refuses %o without PUBLIC_URL and ACK_SECRET', (env) => {
    const name = Object.keys(env)[0]!;
    expect(problems(env)).toEqual([expect.stringMatching(new RegExp(`^${name}: .*PUBLIC_URL.*ACK_SECRET`))]);
    expect(problems({ ...env, PUBLIC_URL: ACK.PUBLIC_URL })).toEqual([
      expect.stringMatching(new RegExp(`^${name}: .*ACK_SECRET`)),
    ]);
    expect(loadConfig({ ...env, ...ACK }).escalation).toBeDefined();
  });
});

describe('durations have an upper bound', () => {
  it.each([
    ['ENRICHMENT_TIMEOUT_MS', '3000000000'],
    ['ENRICHMENT_TIMEOUT_MS', '60000'],
    ['PROMETHEUS_QUERY_TIMEOUT_MS', '3000000000'],
    ['DELIVERY_TIMEOUT_MS', '3000000000'],
    ['HEARTBEAT_TIMEOUT_SECONDS', '99999999999'],
    ['ACK_TOKEN_TTL_SECONDS', '99999999999'],
    ['ESCALATION_DELAY_SECONDS', '99999999999'],
    ['DEDUPE_TTL_SECONDS', '99999999999'],
    ['MEMORY_TREND_WINDOW_HOURS', '100000'],
  ])('%s=%s is refused, naming the setting and its range', (name, value) => {
    const found = problems({
      [name]: value,
      ...(name.startsWith('ESCALATION') && { ESCALATION_SLACK_WEBHOOK_URL: SLACK, ...ACK }),
    });
    expect(found).toEqual([expect.stringMatching(new RegExp(`^${name}: .*\\d`))]);
  });

  it('refuses a Prometheus query time-out longer than the whole enrichment budget', () => {
    expect(problems({ PROMETHEUS_QUERY_TIMEOUT_MS: '9000', ENRICHMENT_TIMEOUT_MS: '2000' })).toEqual([
      expect.stringMatching(/^PROMETHEUS_QUERY_TIMEOUT_MS: .*ENRICHMENT_TIMEOUT_MS/),
    ]);
  });

  it.each([
    ['PORT', '1e3'],
    ['HEARTBEAT_TIMEOUT_SECONDS', '0x10'],
    ['DELIVERY_RETRIES', '1.0'],
    ['ENRICHMENT_TIMEOUT_MS', ' 2e3'],
  ])('%s=%s: whole numbers are written in decimal digits', (name, value) => {
    expect(problems({ [name]: value })).toEqual([expect.stringMatching(new RegExp(`^${name}: `))]);
  });
});

describe('webhook URLs with credentials', () => {
  it.each(['SLACK_WEBHOOK_URL', 'FEISHU_WEBHOOK_URL', 'ESCALATION_SLACK_WEBHOOK_URL'])(
    '%s with user:password@ is refused without echoing it',
    (name) => {
      const found = problems({
        [name]: 'https://user:HookPassword222@hooks.example.com/services/T1/B1/HookSecret333',
        ...ACK,
      });
      expect(found).toEqual([expect.stringMatching(new RegExp(`^${name}: .*credentials`))]);
      expect(found.join('\n')).not.toMatch(/HookPassword222|HookSecret333/);
    },
  );

  it('the same in a routing file secret', () => {
    const file = routingFile(
      'channels:\n  team: { type: feishu, webhookUrl: { secret: FEISHU_TEAM } }\ndefault:\n  channels: [team]\n',
    );
    const found = problems({
      ROUTING_FILE: file,
      FEISHU_TEAM: 'https://user:FeishuPw222@open.feishu.cn/open-apis/bot/v2/hook/abcd-1234',
    });
    expect(found).toEqual([
      expect.stringMatching(/channels\.team\.webhookUrl: setting FEISHU_TEAM must not contain credentials/),
    ]);
    expect(found.join('\n')).not.toMatch(/FeishuPw222|abcd-1234/);
  });
});

describe('ACK_SECRET_PREVIOUS_UNTIL', () => {
  const rotation = { ACK_SECRET: 'y'.repeat(32), ACK_SECRET_PREVIOUS: 'x'.repeat(32) };
  it.each(['Dec 1', '2026-12-01', '2026-12-01T00:00:00', '12/01/2026', '1 December 2026 00:00 UTC', '-1', '1e9'])(
    'refuses %j: a time without a zone or in a loose form',
    (until) => {
      expect(problems({ ...rotation, ACK_SECRET_PREVIOUS_UNTIL: until })).toEqual([
        expect.stringMatching(/^ACK_SECRET_PREVIOUS_UNTIL: .*RFC 3339.*Unix seconds/),
      ]);
    },
  );

  it.each(['1764547200000', '1764547200000000'])(
    'refuses %j: milliseconds (what Date.now() gives), which read as seconds would keep the retired key for ever',
    (until) => {
      expect(problems({ ...rotation, ACK_SECRET_PREVIOUS_UNTIL: until })).toEqual([
        expect.stringMatching(/^ACK_SECRET_PREVIOUS_UNTIL: must be Unix seconds, not milliseconds/),
      ]);
    },
  );

  it('refuses a time further ahead than the links live (ACK_TOKEN_TTL_SECONDS)', () => {
    const inDays = (d: number) => new Date(Date.now() + d * 86_400_000).toISOString();
    expect(problems({ ...rotation, ACK_SECRET_PREVIOUS_UNTIL: inDays(8) })).toEqual([
      expect.stringMatching(/^ACK_SECRET_PREVIOUS_UNTIL: is further ahead than ACK_TOKEN_TTL_SECONDS \(604800 s\)/),
    ]);
    expect(
      problems({ ...rotation, ACK_SECRET_PREVIOUS_UNTIL: String(Math.floor(Date.now() / 1000) + 99_999_999) }),
    ).toHaveLength(1);
    expect(
      loadConfig({ ...rotation, ACK_SECRET_PREVIOUS_UNTIL: inDays(6) }).ackPreviousSecret?.untilMs,
    ).toBeGreaterThan(Date.now());
    expect(
      problems({ ...rotation, ACK_TOKEN_TTL_SECONDS: '86400', ACK_SECRET_PREVIOUS_UNTIL: inDays(2) }),
    ).toHaveLength(1);
  });

  it.each([
    ['2026-12-01T00:00:00Z', Date.UTC(2026, 11, 1)],
    ['2026-12-01T08:00:00+08:00', Date.UTC(2026, 11, 1)],
    ['2026-12-01t00:00:00.500z', Date.UTC(2026, 11, 1) + 500],
    ['1796083200', Date.UTC(2026, 11, 1)],
  ])('accepts %j', (until, ms) => {
    expect(loadConfig({ ...rotation, ACK_SECRET_PREVIOUS_UNTIL: until }).ackPreviousSecret?.untilMs).toBe(ms);
  });
});

describe('Prometheus and Alertmanager base URLs', () => {
  it.each([
    ['PROMETHEUS_URL', 'http://prometheus:9090/graph'],
    ['PROMETHEUS_URL', 'http://prometheus:9090/query'],
    ['PROMETHEUS_URL', 'http://prometheus:9090/prefix/alerts'],
    ['PROMETHEUS_URL', 'http://prometheus:9090/api/v1'],
    ['PROMETHEUS_URL', 'http://prometheus:9090/#/graph'],
    ['PROMETHEUS_URL', 'http://prometheus:9090/?g0.expr=up'],
    ['ALERTMANAGER_URL', 'http://alertmanager:9093/#/alerts'],
    ['ALERTMANAGER_URL', 'http://alertmanager:9093/api/v2/'],
  ])('%s=%s is refused with what to give instead', (name, value) => {
    expect(problems({ [name]: value })).toEqual([expect.stringMatching(new RegExp(`^${name}: .*base URL`))]);
  });

  it('accepts a base URL with a path prefix', () => {
    expect(
      loadConfig({
        PROMETHEUS_URL: 'http://ops.example.com/prometheus/',
        ALERTMANAGER_URL: 'http://ops.example.com/alertmanager',
      }),
    ).toMatchObject({
      prometheusUrl: 'http://ops.example.com/prometheus',
      alertmanagerUrl: 'http://ops.example.com/alertmanager',
    });
  });
});
