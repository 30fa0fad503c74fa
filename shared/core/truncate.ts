/**
 * Cutting text to a platform limit without breaking what a reader sees: never inside a surrogate
 * pair, a multi-byte UTF-8 character or a grapheme cluster (an emoji with skin tone or ZWJ
 * sequence, a letter with combining marks), and always ending in `…` so the cut shows.
 *
 * Limits come in two units: UTF-16 code units (JavaScript `length`; Slack counts characters, and
 * code units are never fewer) and UTF-8 bytes (Feishu bodies, SNS messages).
 */
import { lazy } from './lazy.js';

/** Appended to cut text: one code unit, three UTF-8 bytes. */
export const ELLIPSIS = '…';

// Built on first use, not at import: the first Intl object of a process loads ICU data (Lambda cold init).
const segmenter = lazy(() => new Intl.Segmenter('en', { granularity: 'grapheme' }));
/** How far before a cut grapheme boundaries are looked for, code units (longer clusters are cut at a code point). */
const CLUSTER_WINDOW = 64;

/**
 * The last grapheme boundary at or before `index` (a code-unit offset), never inside a
 * surrogate pair.
 */
export function boundaryAtOrBefore(text: string, index: number): number {
  if (index >= text.length) return text.length;
  if (index <= 0) return 0;
  const start = windowStart(text, Math.max(0, index - CLUSTER_WINDOW));
  let boundary = -1;
  for (const { index: i } of segmenter().segment(text.slice(start, index + CLUSTER_WINDOW))) {
    if (start + i > index) break;
    boundary = start + i;
  }
  // The window started inside a cluster longer than the window: fall back to a code point boundary.
  if (boundary <= start && start > 0) boundary = index;
  if (isLowSurrogate(text.charCodeAt(boundary)) && boundary > 0) boundary -= 1;
  return boundary;
}

const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff;

/**
 * Where to start segmenting: an ASCII character at or before `from`, since a cluster boundary
 * precedes one (nearly always), so pairs such as flag emoji are counted from a true boundary.
 */
function windowStart(text: string, from: number): number {
  for (let i = from; i > 0 && from - i < 4 * CLUSTER_WINDOW; i--) if (text.charCodeAt(i) < 0x80) return i;
  return from <= 4 * CLUSTER_WINDOW ? 0 : from;
}

/**
 * Shortens `text` to at most `max` UTF-16 code units, ending in `…` when cut.
 * @returns `text` itself when it fits; `''` when `max` < 1
 */
export function truncateChars(text: string, max: number): string {
  if (text.length <= max) return text;
  if (max < 1) return '';
  return text.slice(0, boundaryAtOrBefore(text, max - ELLIPSIS.length)) + ELLIPSIS;
}

/** UTF-8 size of `text`, bytes. */
export const utf8Bytes = (text: string): number => Buffer.byteLength(text, 'utf8');

/**
 * Shortens `text` to at most `maxBytes` UTF-8 bytes, ending in `…` (3 bytes) when cut.
 * @returns `text` itself when it fits; `''` when `maxBytes` < 3
 */
export function truncateBytes(text: string, maxBytes: number): string {
  if (utf8Bytes(text) <= maxBytes) return text;
  const room = maxBytes - utf8Bytes(ELLIPSIS);
  if (room < 0) return '';
  let bytes = 0;
  let index = 0;
  for (const char of text) {
    const size = utf8Bytes(char);
    if (bytes + size > room) break;
    bytes += size;
    index += char.length;
  }
  return text.slice(0, boundaryAtOrBefore(text, index)) + ELLIPSIS;
}
