/**
 * Formatting marks of the chat dialects alert text is pasted into: Slack mrkdwn's `*bold*`, `_italic_`,
 * `~strike~`, `` `code` `` and the robots' markdown `**bold**`, `__bold__`, `~~strike~~`. Neither platform
 * documents an escape for them (a backslash shows as typed), so in alert text a mark that could open or close
 * formatting is shown as its full-width form (`*`→`＊`, `_`→`＿`, `~`→`～`, `` ` ``→`｀`): the reader sees the
 * same text, nothing is formatted. A mark inside a word (`model_name`, `a*b`: a letter or digit on both
 * sides) formats nothing in Slack and is left as typed, so label values copied from a message stay as they are.
 * @see https://api.slack.com/reference/surfaces/formatting#basic-formatting
 */

const FULL_WIDTH: Readonly<Record<string, string>> = { '*': '＊', _: '＿', '~': '～', '`': '｀' };
const WORD_CHAR = /[\p{L}\p{N}]/u;

/**
 * `text` with every formatting mark `marks` names shown full-width, except inside a word.
 * @param marks the marks to consider, as a character class body (default all four: `*_~\``)
 */
export function showFormattingMarks(text: string, marks = '*_~`'): string {
  return text.replace(/[*_~`]/g, (mark, at: number) => {
    const inWord = WORD_CHAR.test(text[at - 1] ?? '') && WORD_CHAR.test(text[at + 1] ?? '');
    return inWord || !marks.includes(mark) ? mark : FULL_WIDTH[mark]!;
  });
}
