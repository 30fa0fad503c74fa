/**
 * The fallback channel when none is configured: prints the plain-text notification, so a first
 * `npm start` shows what would have been sent. A routing file may also name console instances.
 *
 * The output shares stdout with the JSON log lines, and alert text is written by whoever sets a
 * label or an annotation: printed as is, `\n{"level":"error",…}` in a summary would forge a log
 * line, and ESC sequences would drive the terminal. So every line starts with {@link MARGIN} (no
 * printed line can parse as a log line) and control characters are shown escaped.
 */
import * as z from '../core/zod.js';
import type { RenderOptions } from '../render/digest.js';
import type { Channel } from './channel.js';
import { renderFields, type ChannelType, type InstanceBase } from './settings.js';
import { renderText } from '../render/text.js';

/** Separates notifications in the output. */
const RULE = '─'.repeat(60);
/** Starts every printed line of a notification. */
const MARGIN = '│ ';
/**
 * Characters printed as `\uXXXX`: C0 controls except the line feed (ESC starts terminal sequences, CR
 * returns to the line start), DEL, C1 controls (CSI U+009B, NEL U+0085), the Unicode line and
 * paragraph separators, and bidirectional overrides (they reorder what the reader sees).
 */
const UNSAFE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * Text as the console prints it: unsafe characters ({@link UNSAFE}) as `\u001b`-style escapes, and
 * {@link MARGIN} before every line.
 * @example consoleText('a\u001b[2J\n{"level":"error"}') // '│ a\\u001b[2J\n│ {"level":"error"}'
 */
export function consoleText(text: string): string {
  const visible = text.replace(UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return visible
    .split('\n')
    .map((line) => (line ? MARGIN + line : MARGIN.trimEnd()))
    .join('\n');
}

/**
 * @param write where the text goes (default: stdout); receives one string per notification,
 *   the rendered text ({@link consoleText}) between two rules, ending in a newline
 * @param options.name the instance name recorded in the ledger; default `console`
 * @param options.locale default `en`
 */
export function createConsoleChannel(
  write: (s: string) => void = (s) => process.stdout.write(s),
  options: { name?: string } & RenderOptions = {},
): Channel {
  return {
    name: options.name ?? 'console',
    async send(notification) {
      write(`${RULE}\n${consoleText(renderText(notification, Number.POSITIVE_INFINITY, options))}\n${RULE}\n`);
    },
  };
}

const schema = z.strictObject({ type: z.literal('console'), ...renderFields });
type ConsoleSpec = z.infer<typeof schema>;
export type ConsoleInstance = InstanceBase & { type: 'console' };

/** The console's settings: a routing-file entry `{ type: console }` (stdout; `npm start`'s default channel). */
export const consoleType = {
  schema,
  secretNames: () => [],
  resolve: (name, spec) => ({ name, type: 'console', locale: spec.locale, digestAbove: spec.digestAbove }),
  create: (c, deps) => createConsoleChannel(deps.write, { name: c.name, locale: c.locale, digestAbove: c.digestAbove }),
} satisfies ChannelType<ConsoleSpec, ConsoleInstance>;
