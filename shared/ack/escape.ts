/** HTML escaping for the acknowledgement pages (`page.ts`, `page-alert.ts`). */

/** Escapes text for HTML element content and double-quoted attributes. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/**
 * Text from an alert or a person, escaped and isolated in `<bdi>`: a right-to-left override or
 * mark in it (U+202E, U+200F…) then reorders only itself, never the labels and words after it.
 * @see https://html.spec.whatwg.org/multipage/text-level-semantics.html#the-bdi-element
 */
export function isolateHtml(text: string): string {
  return `<bdi>${escapeHtml(text)}</bdi>`;
}

/**
 * The same isolation where no markup can go (the page `<title>`, an `alt` attribute): the text
 * between FIRST STRONG ISOLATE (U+2068) and POP DIRECTIONAL ISOLATE (U+2069). Not escaped.
 * @see https://www.unicode.org/reports/tr9/#Explicit_Directional_Isolates
 */
export function isolateText(text: string): string {
  return `\u2068${text.replace(/[\u2066-\u2069]/g, '')}\u2069`;
}
