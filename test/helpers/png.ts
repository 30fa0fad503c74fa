/**
 * Pixel checks of the chart PNGs (`shared/chart/render.ts`), for the tests that read one: the
 * renderer's own, the chart route's end to end, and the Lambda bundle's.
 */
import { PNG } from 'pngjs';
import { expect } from 'vitest';

/**
 * The chart's size, pixels: `CHART_WIDTH` × `CHART_HEIGHT` of `shared/chart/render.ts`, written out
 * because importing that module loads ECharts and resvg's WebAssembly into the test.
 */
const CHART_SIZE = [800, 360];

/** Pixels that are neither white nor grey: the drawn series, marks and coloured labels. */
export function colouredPixels(png: PNG): number {
  let n = 0;
  for (let i = 0; i < png.data.length; i += 4) {
    const [r, g, b] = [png.data[i]!, png.data[i + 1]!, png.data[i + 2]!];
    if (Math.max(r, g, b) - Math.min(r, g, b) > 60) n++;
  }
  return n;
}

/** Pixels within a small distance (sum of channel differences < 40) of `hex`, e.g. `#6941c6`. */
export function pixelsNear(png: PNG, hex: string): number {
  const [r, g, b] = [1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16)) as [number, number, number];
  let n = 0;
  for (let i = 0; i < png.data.length; i += 4)
    if (Math.abs(png.data[i]! - r) + Math.abs(png.data[i + 1]! - g) + Math.abs(png.data[i + 2]! - b) < 40) n++;
  return n;
}

/**
 * Decodes `bytes` and asserts it is a drawn chart: the chart's size, with more than 1000 coloured
 * pixels (a message image such as "Chart unavailable" has far fewer).
 * @returns the decoded image, for further checks
 */
export function expectDrawnChart(bytes: Uint8Array): PNG {
  const png = PNG.sync.read(Buffer.from(bytes));
  expect([png.width, png.height]).toEqual(CHART_SIZE);
  expect(colouredPixels(png)).toBeGreaterThan(1000);
  return png;
}
