/** HTML escaping for the acknowledgement pages (`page.ts`, `page-alert.ts`). */
import { isolateBidi } from '../render/bidi.js';

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
 * The same isolation where no markup can go (the page `<title>`, an `alt` attribute): FSI … PDI around
 * text holding bidi controls or right-to-left letters (`isolateBidi`, as messages do). Not escaped.
 */
export const isolateText = isolateBidi;
