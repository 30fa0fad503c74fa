/**
 * Bidirectional-text isolation for text from alerts placed inline among other words (a label value
 * between ` · ` separators, a title). A right-to-left override (U+202E) or right-to-left letters in
 * one value would otherwise reorder the text after it: `severity=critical` shown as
 * `lacitirc=ytireves`. Written here because it is one regular expression and two characters.
 * @see https://www.unicode.org/reports/tr9/#Explicit_Directional_Isolates
 */

/** Bidi controls (marks, embeddings, overrides, isolates) and right-to-left scripts (Hebrew … Arabic Extended, their presentation forms, the RTL planes). */
const BIDI_SENSITIVE =
  /[\u0590-\u08FF\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069\uFB1D-\uFDFF\uFE70-\uFEFF\u{10800}-\u{10FFF}\u{1E800}-\u{1EFFF}]/u;

/** The isolate characters; one inside a value would close ours early, so they are taken out of it. */
const ISOLATES = /[\u2066-\u2069]/g;

/**
 * `text` between FIRST STRONG ISOLATE (U+2068) and POP DIRECTIONAL ISOLATE (U+2069) when it holds
 * bidi controls or right-to-left letters, its own isolate characters removed; other text unchanged
 * (left-to-right text cannot reorder its neighbours, and messages stay byte for byte as before).
 */
export function isolateBidi(text: string): string {
  return BIDI_SENSITIVE.test(text) ? `\u2068${text.replace(ISOLATES, '')}\u2069` : text;
}
