/**
 * The recorded AMP events are what the real template engine renders today: re-rendered with amtool
 * from their groups (test/fixtures/amp/record.ts), they match byte for byte. A change to the shipped
 * template or to record.ts without re-recording fails here.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CASES, publish, snsEvent } from '../../fixtures/amp/record.js';

describe('test/fixtures/amp/*.event.json', () => {
  it.each(Object.keys(CASES))(
    '%s is current',
    (name) => {
      const stored = JSON.parse(
        readFileSync(new URL(`../../fixtures/amp/${name}.event.json`, import.meta.url), 'utf8'),
      );
      expect(stored).toEqual(snsEvent(name, publish(CASES[name]!)));
    },
    30_000,
  );
});
