/** The memory-trend and query settings as `loadConfig` reads them from the environment. */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../shared/runtime/config.js';

describe('enrichment settings', () => {
  it('are unset by default (DCGM framebuffer in MiB, per-query time-out half the budget)', () => {
    expect(loadConfig({}).enrichment).toMatchObject({
      memorySeries: undefined,
      memorySeriesUnit: undefined,
      queryTimeoutMs: undefined,
      timeoutMs: 2000,
    });
  });

  it('read MEMORY_SERIES, MEMORY_SERIES_UNIT and PROMETHEUS_QUERY_TIMEOUT_MS', () => {
    const env = {
      MEMORY_SERIES: 'process_resident_memory_bytes',
      MEMORY_SERIES_UNIT: 'bytes',
      PROMETHEUS_QUERY_TIMEOUT_MS: '800',
    };
    expect(loadConfig(env).enrichment).toMatchObject({
      memorySeries: 'process_resident_memory_bytes',
      memorySeriesUnit: 'bytes',
      queryTimeoutMs: 800,
    });
  });

  it('name the variable when a value is wrong', () => {
    expect(() => loadConfig({ MEMORY_SERIES: 'rate(x[5m])' })).toThrow(ConfigError);
    expect(() => loadConfig({ MEMORY_SERIES: 'rate(x[5m])' })).toThrow(
      /MEMORY_SERIES: must be a Prometheus metric name/,
    );
    expect(() => loadConfig({ MEMORY_SERIES_UNIT: 'MB' })).toThrow(
      /MEMORY_SERIES_UNIT: must be one of bytes, KiB, MiB, GiB/,
    );
    expect(() => loadConfig({ PROMETHEUS_QUERY_TIMEOUT_MS: '-1' })).toThrow(
      /PROMETHEUS_QUERY_TIMEOUT_MS: must be a whole number of milliseconds 1–20000/,
    );
  });
});
