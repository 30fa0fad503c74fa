import { describe, expect, it } from 'vitest';
import { keyPart, MAX_KEY_PART_BYTES } from '../../../shared/store/keys.js';
import { eventKey } from '../../../shared/store/keys.js';
import { historyKey, recordKey } from '../../../shared/store/keys.js';

describe('keyPart', () => {
  it('keeps ordinary fingerprints, so the keys of deployed tables keep their meaning', () => {
    expect(keyPart('c10780c1bb3d6376')).toBe('c10780c1bb3d6376');
    expect(
      eventKey({ fingerprint: 'c10780c1bb3d6376', startsAt: '2026-11-29T12:42:23.143000000Z', status: 'firing' }),
    ).toBe('event#c10780c1bb3d6376#2026-11-29T12:42:23.143Z#firing');
    expect(recordKey('c10780c1bb3d6376')).toBe('alert#c10780c1bb3d6376');
    expect(historyKey('c10780c1bb3d6376', 7)).toBe('history#c10780c1bb3d6376#0000000007');
    const longest = 'a'.repeat(MAX_KEY_PART_BYTES);
    expect(keyPart(longest)).toBe(longest);
  });

  it('carries a longer one as a stable digest of its bytes, counting UTF-8 bytes (not characters)', () => {
    const long = 'a'.repeat(MAX_KEY_PART_BYTES + 1);
    expect(keyPart(long)).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(keyPart(long)).toBe(keyPart('a'.repeat(MAX_KEY_PART_BYTES + 1)));
    expect(keyPart(long)).not.toBe(keyPart(`${long}a`));
    // 100 CJK characters are 300 bytes: dynalite counts characters, DynamoDB bytes.
    expect(keyPart('告'.repeat(100))).toMatch(/^sha256:/);
    expect(keyPart('sha256:0123')).toBe('sha256:0123');
  });

  it('is idempotent: a link or the audit route may name the alert by its digest', () => {
    const long = 'f0'.repeat(1050);
    expect(keyPart(keyPart(long))).toBe(keyPart(long));
    expect(recordKey(keyPart(long))).toBe(recordKey(long));
  });

  it('digests a fingerprint that is not well-formed Unicode (DynamoDB keys are UTF-8)', () => {
    expect(keyPart('abc\ud800')).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(keyPart('😀')).toBe('😀');
  });
});
