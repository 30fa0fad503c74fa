/** What the two matcher grammars produce, before regular expressions are compiled. */

export type MatchType = '=' | '!=' | '=~' | '!~';

/** A matcher as read from text: the name and value unquoted. */
export interface MatcherText {
  name: string;
  type: MatchType;
  /** A regular expression for `=~` and `!~`. */
  value: string;
}

/** A grammar's reading of a text: its matchers, or why it does not parse. */
export type ParseResult = { ok: true; matchers: MatcherText[] } | { ok: false; error: string };
