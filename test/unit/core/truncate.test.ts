import { describe, expect, it } from 'vitest';
import { boundaryAtOrBefore, truncateBytes, truncateChars, utf8Bytes } from '../../../shared/core/truncate.js';

/** Whether `s` is well-formed UTF-16 (no lone surrogate). */
const wellFormed = (s: string) => !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s);
const graphemes = (s: string) =>
  [...new Intl.Segmenter('en', { granularity: 'grapheme' }).segment(s)].map((g) => g.segment);

const FAMILY = '👨‍👩‍👧‍👦'; // 11 code units, one grapheme
const FLAG = '🇨🇳'; // two regional indicators, 4 code units
const THUMBS = '👍🏽'; // emoji + skin tone, 4 code units
const E_ACUTE = 'e\u0301'; // e + combining acute

describe('truncateChars', () => {
  it('returns text that fits unchanged, and cuts with … at exactly the limit', () => {
    expect(truncateChars('abcdef', 6)).toBe('abcdef');
    expect(truncateChars('abcdefg', 6)).toBe('abcde…');
    expect(truncateChars('abc', 0)).toBe('');
  });

  it.each([
    ['a surrogate pair', '🔥'],
    ['a ZWJ family', FAMILY],
    ['a flag', FLAG],
    ['a skin-tone emoji', THUMBS],
    ['a combining accent', E_ACUTE],
  ])('never splits %s, whatever the limit', (_name, cluster) => {
    const text = `ab${cluster}${cluster}cd`;
    for (let max = 1; max <= text.length; max++) {
      const cut = truncateChars(text, max);
      expect(cut.length).toBeLessThanOrEqual(max);
      expect(wellFormed(cut)).toBe(true);
      const kept = cut.endsWith('…') && cut !== text ? cut.slice(0, -1) : cut;
      // Every grapheme kept is whole: the kept text is a prefix made of the original's graphemes.
      const original = graphemes(text);
      expect(graphemes(kept)).toEqual(original.slice(0, graphemes(kept).length));
    }
  });

  it('keeps as much as fits: the cut is at the last whole grapheme before the limit', () => {
    expect(truncateChars(`abc${FAMILY}`, 13)).toBe('abc…');
    expect(truncateChars(`abc${FAMILY}xy`, 15)).toBe(`abc${FAMILY}…`);
  });

  it('finds boundaries in long text without scanning all of it (flags counted from a true boundary)', () => {
    const text = `${'x'.repeat(1000)}${FLAG.repeat(100)}`;
    for (const index of [1001, 1002, 1003, 1004, 1005, 1200, 1201, 1202, 1203]) {
      const b = boundaryAtOrBefore(text, index);
      expect((b - 1000) % 4).toBe(0);
      expect(b).toBeLessThanOrEqual(index);
      expect(index - b).toBeLessThan(4);
    }
  });
});

describe('truncateBytes', () => {
  it('counts UTF-8 bytes: CJK is 3 bytes a character, emoji 4', () => {
    expect(utf8Bytes('告警')).toBe(6);
    expect(utf8Bytes('🔥')).toBe(4);
    expect(truncateBytes('告警告警', 12)).toBe('告警告警');
    expect(truncateBytes('告警告警', 11)).toBe('告警…');
    expect(utf8Bytes(truncateBytes('告警告警', 11))).toBe(9);
  });

  it('never cuts inside a multi-byte character or grapheme, at every byte limit', () => {
    const text = `告${FAMILY}é${FLAG}🔥${E_ACUTE}x`;
    for (let max = 0; max <= utf8Bytes(text) + 1; max++) {
      const cut = truncateBytes(text, max);
      expect(utf8Bytes(cut)).toBeLessThanOrEqual(max);
      expect(wellFormed(cut)).toBe(true);
      expect(Buffer.from(cut, 'utf8').toString('utf8')).toBe(cut);
      const kept = cut === text ? cut : cut.slice(0, -1);
      expect(graphemes(kept)).toEqual(graphemes(text).slice(0, graphemes(kept).length));
    }
  });

  it('returns "" when not even the ellipsis fits', () => {
    expect(truncateBytes('告警', 2)).toBe('');
    expect(truncateBytes('告警', 3)).toBe('…');
  });
});
