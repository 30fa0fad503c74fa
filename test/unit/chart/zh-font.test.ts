/**
 * The bundled CJK font subset (`shared/chart/zh-font.ts`) is what `npm run chart-font` makes from the
 * chart's words and the signals' labels now: a zh-CN word that needs a character the subset lacks
 * would draw as a box, so a changed word fails here until the module is made again.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { chartFontCharacters, chartFontModule, FONT_MODULE } from '../../../scripts/chart-font.js';
import { ZH_FONT_BASE64, ZH_FONT_CHARS } from '../../../shared/chart/zh-font.js';

describe('the chart CJK font subset', () => {
  it('is the one made from the current words (run `npm run chart-font` after changing a zh-CN word)', async () => {
    expect(ZH_FONT_CHARS.replaceAll('\n', '')).toBe(chartFontCharacters());
    expect(readFileSync(FONT_MODULE, 'utf8')).toBe(await chartFontModule());
  }, 30_000);

  it('holds every character of the zh-CN words and is a TrueType file of a few tens of kB', () => {
    for (const c of '触发现在阈值容量趋势无数据时间约小时后占满天显存用量使用率，：（）0123456789')
      expect(ZH_FONT_CHARS).toContain(c);
    const font = Buffer.from(ZH_FONT_BASE64, 'base64');
    expect(font.subarray(0, 4)).toEqual(Buffer.from([0, 1, 0, 0]));
    expect(font.length).toBeLessThan(80_000);
  });
});
