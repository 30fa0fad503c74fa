/**
 * Alertmanager's UTF-8 matcher grammar (0.27+, `matcher/parse`): names and values are either
 * double-quoted Go strings (`"service.name"`, `"a\u00e9"`; Go's escapes, no raw newline) or runs of
 * characters that are not reserved (`{ } ! = ~ , \ " ' \``, white space), so `service.name` and
 * `模型` are names too. A list may have braces (both or neither) and a trailing comma.
 *
 * Written here because no package implements Alertmanager's grammar; it follows the Go lexer and
 * parser rule by rule (error texts are ours).
 * @see https://github.com/prometheus/alertmanager/blob/main/matcher/parse/lexer.go
 * @see https://github.com/prometheus/alertmanager/blob/main/matcher/parse/parse.go
 * @see https://prometheus.io/docs/alerting/latest/configuration/#label-matchers
 */
import type { MatchType, MatcherText, ParseResult } from './types.js';

type Token = { kind: '{' | '}' | ',' | 'op'; text: string } | { kind: 'quoted' | 'unquoted'; text: string };

const SPACE = /\p{White_Space}/u;
const RESERVED = /[\p{White_Space}{}!=~,\\"'`]/u;

class SyntaxProblem extends Error {}

/** Parses a list of matchers with the UTF-8 grammar (empty input and `{}`: no matcher). */
export function parseUtf8Matchers(text: string): ParseResult {
  try {
    return { ok: true, matchers: parseTokens(lex(text)) };
  } catch (err) {
    if (err instanceof SyntaxProblem) return { ok: false, error: err.message };
    throw err;
  }
}

function lex(text: string): Token[] {
  const chars = [...text];
  const tokens: Token[] = [];
  for (let i = 0; i < chars.length; ) {
    const c = chars[i]!;
    if (SPACE.test(c)) {
      i++;
    } else if (c === '{' || c === '}' || c === ',') {
      tokens.push({ kind: c, text: c });
      i++;
    } else if (c === '=' || c === '!') {
      const next = chars[i + 1];
      if (c === '!' && next !== '=' && next !== '~')
        throw new SyntaxProblem(`"!" at ${i + 1} must be followed by = or ~`);
      const two = next === '~' || (c === '!' && next === '=');
      tokens.push({ kind: 'op', text: two ? c + next : c });
      i += two ? 2 : 1;
    } else if (c === '"') {
      let end = i + 1;
      while (end < chars.length && chars[end] !== '"') end += chars[end] === '\\' ? 2 : 1;
      if (end >= chars.length) throw new SyntaxProblem(`${chars.slice(i).join('')}: missing end "`);
      tokens.push({ kind: 'quoted', text: chars.slice(i, end + 1).join('') });
      i = end + 1;
    } else if (!RESERVED.test(c)) {
      let end = i;
      while (end < chars.length && !RESERVED.test(chars[end]!)) end++;
      tokens.push({ kind: 'unquoted', text: chars.slice(i, end).join('') });
      i = end;
    } else {
      throw new SyntaxProblem(`${c} at ${i + 1}: invalid input`);
    }
  }
  return tokens;
}

function parseTokens(tokens: Token[]): MatcherText[] {
  let i = 0;
  const peek = () => tokens[i];
  const braced = peek()?.kind === '{';
  if (braced) i++;
  const matchers: MatcherText[] = [];
  while (peek() && peek()!.kind !== '}') {
    matchers.push(parseMatcher(tokens.slice(i, i + 3)));
    i += 3;
    const after = peek();
    if (after?.kind === ',') i++;
    else if (after && after.kind !== '}')
      throw new SyntaxProblem(`unexpected ${after.text}: expected a comma or close brace`);
  }
  if (braced && peek()?.kind !== '}') throw new SyntaxProblem('expected close brace');
  if (!braced && peek()?.kind === '}') throw new SyntaxProblem('}: expected opening brace');
  if (braced) i++;
  if (i < tokens.length) throw new SyntaxProblem(`unexpected ${tokens[i]!.text}: expected end of input`);
  return matchers;
}

function parseMatcher([name, op, value]: Token[]): MatcherText {
  if (!name || (name.kind !== 'quoted' && name.kind !== 'unquoted'))
    throw new SyntaxProblem(`${name ? `unexpected ${name.text}: ` : ''}expected label name`);
  if (op?.kind !== 'op')
    throw new SyntaxProblem(
      `${op ? `unexpected ${op.text}: ` : ''}expected an operator such as '=', '!=', '=~' or '!~'`,
    );
  if (!value || (value.kind !== 'quoted' && value.kind !== 'unquoted'))
    throw new SyntaxProblem(`${value ? `unexpected ${value.text}: ` : ''}expected label value`);
  return { name: unquote(name), type: op.text as MatchType, value: unquote(value) };
}

function unquote(token: Token): string {
  if (token.kind !== 'quoted') return token.text;
  const value = goUnquote(token.text.slice(1, -1));
  if (value === undefined) throw new SyntaxProblem(`${token.text}: invalid input (not a Go double-quoted string)`);
  return value;
}

const SIMPLE_ESCAPES: Readonly<Record<string, number>> = {
  a: 7,
  b: 8,
  f: 12,
  n: 10,
  r: 13,
  t: 9,
  v: 11,
  '\\': 92,
  '"': 34,
};
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The body of a Go double-quoted string literal, as `strconv.Unquote` reads it; `undefined` when it
 * is not one (unknown escape, raw newline, bad code point, bytes that are not UTF-8).
 */
export function goUnquote(body: string): string | undefined {
  const bytes: number[] = [];
  const chars = [...body];
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!;
    if (c === '\n') return undefined;
    if (c !== '\\') {
      bytes.push(...Buffer.from(c, 'utf8'));
      continue;
    }
    const e = chars[++i];
    if (e === undefined) return undefined;
    if (e in SIMPLE_ESCAPES) {
      bytes.push(SIMPLE_ESCAPES[e]!);
    } else if (e === 'x' || /[0-7]/.test(e)) {
      // \xHH and \OOO are single bytes, which may build a UTF-8 sequence together.
      const digits = e === 'x' ? chars.slice(i + 1, i + 3).join('') : chars.slice(i, i + 3).join('');
      if (!(e === 'x' ? /^[0-9a-fA-F]{2}$/ : /^[0-7]{3}$/).test(digits)) return undefined;
      const byte = parseInt(digits, e === 'x' ? 16 : 8);
      if (byte > 255) return undefined;
      bytes.push(byte);
      i += 2;
    } else if (e === 'u' || e === 'U') {
      const n = e === 'u' ? 4 : 8;
      const digits = chars.slice(i + 1, i + 1 + n).join('');
      if (!new RegExp(`^[0-9a-fA-F]{${n}}$`).test(digits)) return undefined;
      const code = parseInt(digits, 16);
      if (code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return undefined;
      bytes.push(...Buffer.from(String.fromCodePoint(code), 'utf8'));
      i += n;
    } else {
      return undefined;
    }
  }
  try {
    return UTF8.decode(Uint8Array.from(bytes));
  } catch {
    return undefined;
  }
}
