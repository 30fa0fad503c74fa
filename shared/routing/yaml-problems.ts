/**
 * Routing-file syntax errors in words that never quote the file. The `yaml` parser's messages
 * sometimes quote the text at fault (`Unsupported YAML version <…>`, `Block scalar header includes
 * extra characters: <…>`, `Unresolved alias …: <name>`), and that line may hold a webhook URL pasted
 * where `{ secret: NAME }` belongs. A message that repeats {@link QUOTE_CHARS} characters of the file
 * is replaced by the fixed wording of its error code.
 * @see https://eemeli.org/yaml/#errors
 */
import { isAlias, visit, type Document, type LineCounter, type YAMLError } from 'yaml';

/** A run this long taken from the file counts as quoting it (shorter runs are not a credential). */
export const QUOTE_CHARS = 8;

/** Wording per `yaml` error code, for messages that would quote the file. */
const WORDING: Record<string, string> = {
  ALIAS_PROPS: 'an alias (*name) cannot have an anchor or a tag',
  BAD_ALIAS: 'malformed alias (*name)',
  BAD_COLLECTION_TYPE: 'the tag does not fit this kind of value',
  BAD_DIRECTIVE: 'unsupported or malformed % directive',
  BAD_DQ_ESCAPE: 'invalid escape sequence in a double-quoted string',
  BAD_INDENT: 'bad indentation, or an unclosed { or [',
  BAD_PROP_ORDER: 'anchors and tags must come after the ?, : or - indicator',
  BAD_SCALAR_START: 'a plain value cannot start with this reserved character (quote the value)',
  BLOCK_AS_IMPLICIT_KEY: 'nested mappings are not allowed in compact mappings',
  BLOCK_IN_FLOW: 'block collections are not allowed inside { } or [ ]',
  DUPLICATE_KEY: 'map keys must be unique',
  MISSING_CHAR: 'a closing quote or bracket, a comma or a value is missing',
  MULTILINE_IMPLICIT_KEY: 'implicit keys must be on a single line',
  MULTIPLE_ANCHORS: 'a value can have only one anchor',
  MULTIPLE_DOCS: 'the file must hold a single YAML document',
  MULTIPLE_TAGS: 'a value can have only one tag',
  TAB_AS_INDENT: 'tabs are not allowed as indentation',
  TAG_RESOLVE_FAILED: 'unknown tag (!…); quote a value that starts with !',
  UNEXPECTED_TOKEN: 'unexpected text here',
};

/** `message`, unless it repeats {@link QUOTE_CHARS} characters of `text`; then `fallback`. */
export function unquoted(message: string, text: string, fallback: string): string {
  for (let i = 0; i + QUOTE_CHARS <= message.length; i++) {
    if (text.includes(message.slice(i, i + QUOTE_CHARS))) return fallback;
  }
  return message;
}

/** One parser error as `line: message`, the message never quoting `text`. */
export function yamlProblem(error: YAMLError, text: string, lines: LineCounter): { line: number; message: string } {
  const message = error.message.split('\n')[0] ?? '';
  return {
    line: lines.linePos(error.pos[0]).line,
    message: unquoted(message, text, WORDING[error.code] ?? 'not valid YAML'),
  };
}

/**
 * The problem when turning the document into data fails (an alias to no anchor, too many aliases):
 * at the first alias that resolves to nothing, else line 1.
 */
export function toJsProblem(
  err: unknown,
  doc: Document,
  text: string,
  lines: LineCounter,
): { line: number; message: string } {
  let line = 1;
  visit(doc, {
    Alias(_key, node) {
      if (isAlias(node) && node.resolve(doc) === undefined && node.range) {
        line = lines.linePos(node.range[0]).line;
        return visit.BREAK;
      }
      return undefined;
    },
  });
  return {
    line,
    message: unquoted(
      (err as Error).message ?? '',
      text,
      'an alias (*name) refers to no anchor (&name) defined before it',
    ),
  };
}
