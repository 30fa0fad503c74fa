import { describe, expect, it } from 'vitest';
import { GO_ZERO_TIME } from '../../../shared/alertmanager/schema.js';
import { goTimeToRfc3339, normalizeTime } from '../../../shared/amp/go-time.js';

describe('goTimeToRfc3339 (Go time.Time.String())', () => {
  it.each([
    ['2026-11-30 12:00:00 +0000 UTC', '2026-11-30T12:00:00Z'],
    ['2026-11-29 12:42:23.143 +0000 UTC', '2026-11-29T12:42:23.143Z'],
    ['2026-11-29 12:42:23.143456789 +0000 UTC', '2026-11-29T12:42:23.143456789Z'],
    ['2026-11-29 12:42:23.100 +0000 UTC', '2026-11-29T12:42:23.1Z'],
    ['2026-11-30 14:00:00.5 +0200 CEST', '2026-11-30T14:00:00.5+02:00'],
    ['2026-11-30 06:30:00 -0530 -0530', '2026-11-30T06:30:00-05:30'],
    ['2026-11-30 12:05:00.123 +0000 UTC m=+3600.000000001', '2026-11-30T12:05:00.123Z'],
    ['2026-11-30 12:00:00 +0000', '2026-11-30T12:00:00Z'],
    ['2024-02-29 00:00:00 +0000 UTC', '2024-02-29T00:00:00Z'],
  ])('%s → %s', (go, rfc) => {
    expect(goTimeToRfc3339(go)).toBe(rfc);
  });

  it('reads Go\'s zero time as the webhook\'s zero time ("no end"), where Date.parse says 2001', () => {
    expect(new Date(Date.parse('0001-01-01 00:00:00 +0000 UTC')).getUTCFullYear()).toBe(2001);
    expect(goTimeToRfc3339('0001-01-01 00:00:00 +0000 UTC')).toBe(GO_ZERO_TIME);
  });

  it.each([
    '',
    '2026-11-30',
    '2026-11-30T12:00:00Z',
    '2026-13-01 00:00:00 +0000 UTC',
    '2026-02-29 00:00:00 +0000 UTC',
    '2026-11-30 24:00:00 +0000 UTC',
    '2026-11-30 12:00:00 UTC',
    'yesterday',
  ])('refuses %j', (text) => {
    expect(goTimeToRfc3339(text)).toBeUndefined();
  });
});

describe('normalizeTime', () => {
  it('keeps RFC 3339 as sent and converts Go times', () => {
    expect(normalizeTime('2026-11-29T12:42:23.143Z')).toBe('2026-11-29T12:42:23.143Z');
    expect(normalizeTime('2026-11-29 12:42:23.143 +0000 UTC')).toBe('2026-11-29T12:42:23.143Z');
    expect(normalizeTime('not a time')).toBeUndefined();
  });
});
