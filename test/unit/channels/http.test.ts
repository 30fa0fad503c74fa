import { describe, expect, it } from 'vitest';
import { parseRetryAfter } from '../../../shared/channels/http.js';

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-11-29T12:00:00Z');

  it('reads delay-seconds as milliseconds', () => {
    expect(parseRetryAfter('30', now)).toBe(30_000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
  });

  it('reads an HTTP-date relative to now, never negative', () => {
    expect(parseRetryAfter('Sun, 29 Nov 2026 12:00:45 GMT', now)).toBe(45_000);
    expect(parseRetryAfter('Sun, 29 Nov 2026 11:00:00 GMT', now)).toBe(0);
  });

  it('ignores an absent or unparsable header', () => {
    expect(parseRetryAfter(null, now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('-5', now)).toBeUndefined();
  });
});
