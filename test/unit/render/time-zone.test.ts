import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../shared/core/logger.js';
import { formatTime, setTimeZone, wallClock } from '../../../shared/render/format.js';
import { loadConfig } from '../../../shared/runtime/config.js';
import { createDeps } from '../../../shared/runtime/deps.js';
import { configProblems } from '../../helpers/config.js';

afterEach(() => setTimeZone('UTC'));

describe('TIME_ZONE', () => {
  it('defaults to UTC, named after the time', () => {
    expect(loadConfig({}).timeZone).toBe('UTC');
    expect(formatTime('2026-11-29T12:42:23.512Z')).toBe('2026-11-29 12:42:23 UTC');
  });

  it('shows every time in the configured zone and names it, across a date line and a DST change', () => {
    setTimeZone('Asia/Shanghai');
    expect(formatTime('2026-11-29T20:42:23Z')).toBe('2026-11-30 04:42:23 Asia/Shanghai');
    setTimeZone('America/New_York');
    // EDT (UTC−4) before 2026-11-01 02:00 local, EST (UTC−5) after.
    expect(formatTime('2026-10-31T12:00:00Z')).toBe('2026-10-31 08:00:00 America/New_York');
    expect(formatTime('2026-11-02T12:00:00Z')).toBe('2026-11-02 07:00:00 America/New_York');
    expect(wallClock(Date.parse('2026-11-02T12:00:00Z'), 'UTC')).toBe('2026-11-02 12:00:00');
    expect(formatTime('not a time')).toBe('not a time');
  });

  it('refuses what is not an IANA zone name, naming the setting', () => {
    for (const zone of ['+08:00', 'UTC+8', 'Asia/Shanghia', 'CST6CDT7'])
      expect(configProblems({ TIME_ZONE: zone })).toEqual([
        'TIME_ZONE: must be an IANA time zone name such as Asia/Shanghai or UTC (Area/City: an abbreviation such as CST is ambiguous)',
      ]);
    expect(() => setTimeZone('Mars/Olympus')).toThrow(RangeError);
    // Abbreviations the runtime maps to one region's reading: ICU's CST is US Central, China's is UTC+8.
    for (const zone of ['CST', 'EST', 'PRC', 'EST5EDT'])
      expect(configProblems({ TIME_ZONE: zone })).toEqual([
        'TIME_ZONE: must be an IANA time zone name such as Asia/Shanghai or UTC (Area/City: an abbreviation such as CST is ambiguous)',
      ]);
  });

  it('is set for the process when the app is wired at start', () => {
    const config = loadConfig({ TIME_ZONE: 'Asia/Shanghai' });
    createDeps(config, { dynamodb: new DynamoDBClient({ region: 'us-east-1' }) }, silentLogger);
    expect(formatTime('2026-11-29T12:42:23Z')).toBe('2026-11-29 20:42:23 Asia/Shanghai');
  });
});
