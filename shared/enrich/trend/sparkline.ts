/** A compact picture of a series in Unicode block elements, so a message shows its shape. Pure. */

/** The eight block heights, lowest first (U+2581–U+2588). */
export const BLOCKS = '▁▂▃▄▅▆▇█';

/** Characters in a sparkline: wide enough for a shape, short enough for a phone screen. */
export const SPARKLINE_WIDTH = 24;

/**
 * Draws `values` as at most `width` blocks: the values are split into `width` consecutive buckets
 * (fewer when there are fewer values), each bucket's mean scaled between the smallest and the
 * largest mean. A flat series is a row of middle blocks (`▄`); non-finite values are skipped.
 * @returns the sparkline, oldest first; `''` when there is no finite value
 * @example sparkline([1, 2, 3, 4, 5, 6, 7, 8], 8) // '▁▂▃▄▅▆▇█'
 */
export function sparkline(values: readonly number[], width = SPARKLINE_WIDTH): string {
  const finite = values.filter(Number.isFinite);
  const buckets = Math.min(width, finite.length);
  if (buckets === 0) return '';
  const means = Array.from({ length: buckets }, (_, b) => {
    const slice = finite.slice(
      Math.floor((b * finite.length) / buckets),
      Math.floor(((b + 1) * finite.length) / buckets),
    );
    return slice.reduce((sum, v) => sum + v, 0) / slice.length;
  });
  const low = Math.min(...means);
  const span = Math.max(...means) - low;
  const top = BLOCKS.length - 1;
  return means.map((m) => BLOCKS[span === 0 ? 3 : Math.round(((m - low) / span) * top)]).join('');
}
