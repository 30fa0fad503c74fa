/**
 * The credentials settings of Prometheus and Alertmanager (`PROMETHEUS_BEARER_TOKEN`, `_BASIC_AUTH`,
 * `_HEADERS`, `_SIGV4_REGION` and the same for `ALERTMANAGER_`), validated once at start-up: each problem
 * names the setting and never quotes its value; the values read are wrapped so they print `<redacted>`.
 */
import { describe, expect, it } from 'vitest';
import { redactSecrets } from '../../../shared/core/secret.js';
import { loadConfig } from '../../../shared/runtime/config.js';
import { configProblems } from '../../helpers/config.js';

const URLS = { PROMETHEUS_URL: 'http://prometheus:9090', ALERTMANAGER_URL: 'http://alertmanager:9093' };
const TOKEN = 'tok-9f8e7d6c5b4a3210';

describe.each(['PROMETHEUS', 'ALERTMANAGER'])('%s_* credentials', (server) => {
  it('reads a token, a user and password, header lines and a region', () => {
    const token = loadConfig({ ...URLS, [`${server}_BEARER_TOKEN`]: TOKEN });
    const key = server === 'PROMETHEUS' ? 'prometheusCredentials' : 'alertmanagerCredentials';
    expect(token[key]?.bearerToken?.reveal()).toBe(TOKEN);
    const basic = loadConfig({ ...URLS, [`${server}_BASIC_AUTH`]: 'pipeline:p:a ss' });
    expect(basic[key]?.basicAuth?.reveal()).toBe('pipeline:p:a ss');
    const headers = loadConfig({
      ...URLS,
      [`${server}_HEADERS`]: 'X-Scope-OrgID: team-a\n\n  X-Api-Key :  k 1  \r\n',
      [`${server}_SIGV4_REGION`]: 'us-gov-west-1',
    });
    expect(headers[key]?.headers?.map((h) => [h.name, h.value.reveal()])).toEqual([
      ['X-Scope-OrgID', 'team-a'],
      ['X-Api-Key', 'k 1'],
    ]);
    expect(headers[key]?.sigv4Region).toBe('us-gov-west-1');
    expect(loadConfig(URLS)[key]).toBeUndefined();
  });

  it.each([
    [{ BEARER_TOKEN: `Bearer ${TOKEN}` }, 'BEARER_TOKEN: must be the token alone'],
    [{ BASIC_AUTH: TOKEN }, 'BASIC_AUTH: must be user:password'],
    [{ HEADERS: `X-Scope-OrgID ${TOKEN}` }, 'HEADERS: line 1: must be Name: value'],
    [{ HEADERS: `Authorization: Bearer ${TOKEN}` }, `HEADERS: line 1: set ${server}_BEARER_TOKEN or`],
    [{ HEADERS: `x: 1\nHost: ${TOKEN}` }, 'HEADERS: line 2: Host is set by the pipeline itself'],
    [{ HEADERS: `X-A: 1\nx-a: ${TOKEN}` }, 'HEADERS: line 2: x-a is given twice'],
    [{ HEADERS: `X A: ${TOKEN}` }, 'HEADERS: line 1: the name before ":" is not a header name'],
    [{ HEADERS: `X-A: ${TOKEN}\u0001` }, 'HEADERS: line 1: the value of X-A has control characters'],
    [
      { HEADERS: `X-Scope-OrgID: équipe-${TOKEN}` },
      'HEADERS: line 1: the value of X-Scope-OrgID has characters outside',
    ],
    [{ HEADERS: `X-A: 1\nX-B: 团队${TOKEN}` }, 'HEADERS: line 2: the value of X-B has characters outside ASCII'],
    [{ SIGV4_REGION: 'Europe' }, 'SIGV4_REGION: must be an AWS region'],
    [{ BEARER_TOKEN: TOKEN, BASIC_AUTH: 'u:p' }, `BASIC_AUTH: set with ${server}_BEARER_TOKEN: choose one`],
    [{ BEARER_TOKEN: TOKEN, SIGV4_REGION: 'eu-west-1' }, `SIGV4_REGION: set with ${server}_BEARER_TOKEN`],
  ])('refuses %j naming the setting, never quoting it', (settings, message) => {
    const env = Object.fromEntries(Object.entries(settings).map(([k, v]) => [`${server}_${k}`, v]));
    const problems = configProblems({ ...URLS, ...env });
    expect(problems).toEqual([expect.stringContaining(`${server}_${message}`)]);
    expect(problems.join('\n')).not.toContain(TOKEN.slice(4));
  });

  it(`refuses credentials without ${server}_URL`, () => {
    expect(configProblems({ [`${server}_HEADERS`]: 'X-Scope-OrgID: a' })).toEqual([
      `${server}_HEADERS: set, but ${server}_URL is not (the credentials are for that server)`,
    ]);
  });
});

describe('credential values once read', () => {
  it('print as <redacted> and are scrubbed from text that quotes them, the password alone too', () => {
    const config = loadConfig({
      ...URLS,
      PROMETHEUS_BEARER_TOKEN: 'prom-token-0a1b2c3d4e5f',
      PROMETHEUS_HEADERS: 'X-Scope-OrgID: tenant-7f3e9a',
      ALERTMANAGER_BASIC_AUTH: 'oncall:am-password-6d5c4b',
    });
    expect(JSON.stringify(config.prometheusCredentials)).not.toMatch(/prom-token|tenant-7f3e9a/);
    expect(JSON.stringify(config.alertmanagerCredentials)).not.toContain('am-password');
    expect(redactSecrets('got prom-token-0a1b2c3d4e5f for tenant-7f3e9a, password am-password-6d5c4b')).not.toMatch(
      /prom-token|tenant-7f3e9a|am-password/,
    );
    const basic = Buffer.from('oncall:am-password-6d5c4b').toString('base64');
    expect(redactSecrets(`Authorization: Basic ${basic}`)).not.toContain(basic.slice(0, 16));
  });
});
