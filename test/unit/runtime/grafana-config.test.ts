import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../shared/runtime/config.js';
import { configProblems as problems } from '../../helpers/config.js';

describe('GRAFANA_URL', () => {
  it('is optional: unset or empty means no dashboard link', () => {
    expect(loadConfig({}).grafanaUrl).toBeUndefined();
    expect(loadConfig({ GRAFANA_URL: '' }).grafanaUrl).toBeUndefined();
  });

  it('takes a root URL with a path prefix, a dashboard URL and a query such as orgId, without the trailing slash', () => {
    expect(loadConfig({ GRAFANA_URL: 'https://grafana.example.com/' }).grafanaUrl).toBe('https://grafana.example.com');
    expect(loadConfig({ GRAFANA_URL: 'https://ops.example.com/grafana' }).grafanaUrl).toBe(
      'https://ops.example.com/grafana',
    );
    expect(loadConfig({ GRAFANA_URL: 'https://g.example.com/d/abc123/vllm?orgId=2' }).grafanaUrl).toBe(
      'https://g.example.com/d/abc123/vllm?orgId=2',
    );
    expect(loadConfig({ GRAFANA_URL: 'http://127.0.0.1:3000' }).grafanaUrl).toBe('http://127.0.0.1:3000');
  });

  it('refuses what is not an http(s) URL, naming the setting', () => {
    for (const bad of ['grafana.example.com', 'ftp://grafana.example.com', 'javascript:alert(1)', '/grafana']) {
      expect(problems({ GRAFANA_URL: bad })).toEqual(['GRAFANA_URL: must be an http(s) URL']);
    }
  });

  it('refuses credentials without echoing them', () => {
    const found = problems({ GRAFANA_URL: 'https://admin:hunter2@grafana.example.com' });
    expect(found).toEqual(['GRAFANA_URL: must not contain credentials (user:password@)']);
    expect(found.join('\n')).not.toContain('hunter2');
  });

  it('refuses a fragment: the link sets its variables and range in the query', () => {
    expect(problems({ GRAFANA_URL: 'https://grafana.example.com/#/d/x' })).toEqual([
      'GRAFANA_URL: must not have a fragment (#…); a path prefix, a dashboard path /d/<uid> or a query such as ?orgId=2 is fine',
    ]);
  });
});
