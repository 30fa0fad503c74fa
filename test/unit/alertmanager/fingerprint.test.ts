import { describe, expect, it } from 'vitest';
import { labelSetFingerprint } from '../../../shared/alertmanager/fingerprint.js';
import { fixture, type FixtureName } from '../../helpers/fixtures.js';

const ALL: FixtureName[] = [
  'firing-kv-cache-critical',
  'firing-queue-backlog-two-models',
  'resolved-queue-backlog-two-models',
  'firing-gpu-memory-leak',
];

/** FNV-1a 64 written out here independently of the code under test, over explicit bytes. */
function fnv1a64(bytes: number[]): string {
  let h = 0xcbf29ce484222325n;
  for (const b of bytes) h = BigInt.asUintN(64, (h ^ BigInt(b)) * 0x100000001b3n);
  return h.toString(16).padStart(16, '0');
}
const bytesOf = (s: string) => [...Buffer.from(s, 'utf8')];

describe("labelSetFingerprint (Alertmanager's model.LabelSet.Fingerprint)", () => {
  it.each(ALL)('gives the fingerprint real Alertmanager 0.25 sent, for every alert of %s', (name) => {
    for (const alert of fixture(name).alerts) expect(labelSetFingerprint(alert.labels)).toBe(alert.fingerprint);
  });

  it('does not depend on the order labels are listed in', () => {
    const labels = fixture('firing-gpu-memory-leak').alerts[0]!.labels;
    const reversed = Object.fromEntries(Object.entries(labels).reverse());
    expect(labelSetFingerprint(reversed)).toBe(labelSetFingerprint(labels));
  });

  it('is FNV-1a 64 offset basis for the empty label set, printed as 16 hex digits', () => {
    expect(labelSetFingerprint({})).toBe('cbf29ce484222325');
    expect(labelSetFingerprint({ a: '' })).toMatch(/^[0-9a-f]{16}$/);
  });

  it('sorts names by UTF-8 bytes as Go does, not by UTF-16 code units', () => {
    // U+FF21 is EF BC A1 in UTF-8, U+1F600 is F0 9F 98 80: Go puts U+FF21 first; JavaScript's
    // default sort puts U+1F600 (surrogate D83D) first.
    const labels = { '\u{1F600}': 'b', '\uFF21': 'a' };
    const expected = fnv1a64([
      ...bytesOf('\uFF21'),
      0xff,
      ...bytesOf('a'),
      0xff,
      ...bytesOf('\u{1F600}'),
      0xff,
      ...bytesOf('b'),
      0xff,
    ]);
    expect(labelSetFingerprint(labels)).toBe(expected);
  });

  it('separates names from values, so moving a character across the boundary changes it', () => {
    expect(labelSetFingerprint({ ab: 'c' })).not.toBe(labelSetFingerprint({ a: 'bc' }));
    expect(labelSetFingerprint({ a: 'b', c: 'd' })).toBe(fnv1a64([0x61, 0xff, 0x62, 0xff, 0x63, 0xff, 0x64, 0xff]));
  });
});
