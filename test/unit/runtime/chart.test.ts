import { describe, expect, it } from 'vitest';
import { chartLinkSettings, chartRouteDeps, CHART_QUERY_BUDGET_MS } from '../../../shared/runtime/chart.js';
import { loadConfig } from '../../../shared/runtime/config.js';
import { silentLogger } from '../../../shared/core/logger.js';

const ALL = {
  PUBLIC_URL: 'https://alerts.example.com',
  ACK_SECRET: 'chart-config-secret-0123456789abcdef',
  PROMETHEUS_URL: 'http://prometheus:9090',
};

describe('charts from the configuration', () => {
  it('are on with PUBLIC_URL, ACK_SECRET and PROMETHEUS_URL: the ack keys and TTL sign them', () => {
    const config = loadConfig({ ...ALL, ACK_TOKEN_TTL_SECONDS: '3600' });
    expect(chartLinkSettings(config)).toEqual({
      publicUrl: 'https://alerts.example.com',
      keys: { current: config.ackSecret, previous: undefined },
      ttlSeconds: 3600,
    });
    expect(chartRouteDeps(config, silentLogger)).toMatchObject({
      keys: { current: config.ackSecret },
      timeoutMs: CHART_QUERY_BUDGET_MS,
    });
  });

  it.each(Object.keys(ALL))('are off without %s (no image, no route)', (name) => {
    const config = loadConfig({ ...ALL, [name]: undefined });
    expect(chartLinkSettings(config)).toBeUndefined();
    expect(chartRouteDeps(config, silentLogger)).toBeUndefined();
  });
});
