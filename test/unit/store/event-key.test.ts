/**
 * `eventKey` remembers each `startsAt`'s normalised text: the key must be the same on first sight,
 * on every later one, and after the memory has started afresh (more texts than it keeps).
 */
import { describe, expect, it } from 'vitest';
import { eventKey } from '../../../shared/store/keys.js';

/** The key as defined: `startsAt` in millisecond ISO form when it is a date, as sent otherwise. */
const expected = (fingerprint: string, startsAt: string, status: string) =>
  `event#${fingerprint}#${Number.isNaN(Date.parse(startsAt)) ? startsAt : new Date(startsAt).toISOString()}#${status}`;

describe('eventKey', () => {
  it('gives the defined key for every startsAt, seen before or not, past what it remembers', () => {
    const starts = [
      '2026-11-29T12:42:23.143000000Z',
      '2026-11-29T12:42:23.143Z',
      '2026-11-29T13:42:23+01:00',
      '0001-01-01T00:00:00Z',
      'not a date',
      '',
      // Dates V8 parses with any text in parentheses: a ~1 MB startsAt is a valid one (not remembered).
      `2024-01-01 00:00:00Z (${'x'.repeat(1_000_000)})`,
      `2024-01-01 00:00:00Z (${'y'.repeat(50)})`,
      ...Array.from({ length: 25_000 }, (_, i) =>
        new Date(Date.UTC(2026, 0, 1) + i * 1_001).toISOString().replace('Z', '123456Z'),
      ),
    ];
    for (let pass = 0; pass < 2; pass++)
      for (const [i, startsAt] of starts.entries()) {
        const status = i % 2 ? 'resolved' : 'firing';
        expect(eventKey({ fingerprint: `fp${i % 7}`, startsAt, status })).toBe(
          expected(`fp${i % 7}`, startsAt, status),
        );
      }
  });
});
