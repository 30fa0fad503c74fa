/**
 * Trimming a run of one character off the end of a text in one pass from the end. A pattern such as
 * `/\/+$/` restarts at every character of a long run and costs its square: a URL of 16,000 slashes
 * (an `externalURL` is alert text) took ~0.1 s.
 */

/**
 * `text` without the run of `char` it ends with.
 * @param char one UTF-16 code unit
 * @example trimTrailing('http://am:9093//', '/') // 'http://am:9093'
 */
export function trimTrailing(text: string, char: string): string {
  let end = text.length;
  while (end > 0 && text[end - 1] === char) end--;
  return end === text.length ? text : text.slice(0, end);
}
