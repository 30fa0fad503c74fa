import { describe, expect, it } from 'vitest';
import type { MemoryTrend } from '../../../shared/enrich/types.js';
import { formatMemoryTrend, formatSignalValue } from '../../../shared/enrich/values.js';
import { formatTime, silenceUrl } from '../../../shared/render/format.js';

describe('formatSignalValue', () => {
  it.each([
    [0.85, 'seconds', '850 ms'],
    [0.0042, 'seconds', '4.2 ms'],
    [2.314, 'seconds', '2.31 s'],
    [12.46, 'seconds', '12.5 s'],
    [1234, 'seconds', '1,234 s'],
    [0.973, 'ratio', '97.3%'],
    [1, 'ratio', '100%'],
    [1.2, 'per_second', '1.2/s'],
    [0.0333, 'per_second', '0.033/s'],
    [1234.5, 'per_second', '1,235/s'],
    [61440, 'mebibytes', '61,440 MiB'],
    [102399, 'mebibytes', '102,399 MiB'],
    [102400, 'mebibytes', '100.0 GiB'],
    [85, 'count', '85'],
    [1234, 'count', '1,234'],
    [0.5, 'count', '0.5'],
    [0.97312, 'none', '0.9731'],
    [123456.7, 'none', '123,457'],
  ] as const)('%s %s → %s', (value, unit, expected) => {
    expect(formatSignalValue(value, unit)).toBe(expected);
  });

  it('never shows missing or non-finite values as numbers', () => {
    expect(formatSignalValue(null, 'count')).toBe('no data');
    expect(formatSignalValue(Number.NaN, 'seconds')).toBe('no data (NaN)');
    expect(formatSignalValue(Infinity, 'seconds')).toBe('+Inf');
    expect(formatSignalValue(-Infinity, 'ratio')).toBe('\u2212Inf');
  });
});

describe('formatMemoryTrend', () => {
  const trend: MemoryTrend = {
    growthMiBPerHour: 1200,
    rSquared: 0.98,
    usedMiB: 61440,
    capacityMiB: 72960,
    hoursToFull: 9.6,
    windowSeconds: 21600,
    points: 360,
  };

  it('gives growth, time to full and fit quality', () => {
    expect(formatMemoryTrend(trend)).toBe('+1,200 MiB/h · full in ~9.6 h · R² 0.98');
  });

  it('leaves out "full in" when the capacity is unknown', () => {
    expect(formatMemoryTrend({ ...trend, capacityMiB: null, hoursToFull: null })).toBe('+1,200 MiB/h · R² 0.98');
  });

  it('shows slow growth with a decimal and long horizons in days', () => {
    expect(formatMemoryTrend({ ...trend, growthMiBPerHour: 3.46, hoursToFull: 60, rSquared: 0.5 })).toBe(
      '+3.5 MiB/h · full in ~2.5 d · R² 0.50',
    );
  });

  it('says there is no upward trend when memory is flat or shrinking', () => {
    expect(formatMemoryTrend({ ...trend, growthMiBPerHour: 0 })).toBe('no upward trend');
    expect(formatMemoryTrend({ ...trend, growthMiBPerHour: -40, hoursToFull: null })).toBe('no upward trend');
    expect(formatMemoryTrend({ ...trend, growthMiBPerHour: Number.NaN })).toBe('no upward trend');
  });
});

describe('silenceUrl', () => {
  it('pre-fills Alertmanager’s new-silence form with the alert’s labels, alertname first', () => {
    const url = silenceUrl('http://am.example.com:9093/', {
      model_name: 'qwen3-8b',
      alertname: 'VLLMKVCacheNearlyFull',
    });
    expect(url).toBe(
      'http://am.example.com:9093/#/silences/new?filter=%7Balertname%3D%22VLLMKVCacheNearlyFull%22%2Cmodel_name%3D%22qwen3-8b%22%7D',
    );
  });

  it('escapes quotes and backslashes in matcher values', () => {
    const url = silenceUrl('http://am', { alertname: 'A', path: 'C:\\x "y"' });
    const filter = new URL(url.replace('/#/', '/')).searchParams.get('filter');
    expect(filter).toBe('{alertname="A",path="C:\\\\x \\"y\\""}');
  });
});

describe('formatTime', () => {
  it('formats RFC 3339 (nanoseconds too) as UTC to the second', () => {
    expect(formatTime('2026-11-29T12:42:23.143Z')).toBe('2026-11-29 12:42:23 UTC');
    expect(formatTime('2026-11-29T13:42:23.143456789+01:00')).toBe('2026-11-29 12:42:23 UTC');
  });
});
