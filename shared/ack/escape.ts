/** HTML for the acknowledgement pages (`page.ts`, `page-alert.ts`, `page-words.ts`): `h` and bidi isolation. */
import { h, type Html, joinHtml } from '../core/html.js';
import { isolateBidi } from '../render/bidi.js';

export { h, type Html, joinHtml };

/**
 * Text from an alert or a person, escaped and isolated in `<bdi>`: a right-to-left override or
 * mark in it (U+202E, U+200F…) then reorders only itself, never the labels and words after it.
 * @see https://html.spec.whatwg.org/multipage/text-level-semantics.html#the-bdi-element
 */
export function isolateHtml(text: string): Html {
  return h`<bdi>${text}</bdi>`;
}

/**
 * The same isolation where no markup can go (the page `<title>`, an `alt` attribute): FSI … PDI around
 * text holding bidi controls or right-to-left letters (`isolateBidi`, as messages do). Escaped where used.
 */
export const isolateText = isolateBidi;
