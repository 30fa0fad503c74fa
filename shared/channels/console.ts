/**
 * The fallback channel when none is configured: prints the plain-text notification, so a first
 * `npm start` shows what would have been sent. A routing file may also name console instances.
 */
import type { RenderOptions } from './digest.js';
import type { Channel } from './types.js';
import { renderText } from './text.js';

/** Separates notifications in the output. */
const RULE = '─'.repeat(60);

/**
 * @param write where the text goes (default: stdout); receives one string per notification,
 *   the rendered text between two rules, ending in a newline
 * @param options.name the instance name recorded in the ledger; default `console`
 * @param options.locale default `en`
 */
export function createConsoleChannel(write: (s: string) => void = (s) => process.stdout.write(s), options: { name?: string } & RenderOptions = {}): Channel {
  return {
    name: options.name ?? 'console',
    async send(notification) {
      write(`${RULE}\n${renderText(notification, Number.POSITIVE_INFINITY, options)}\n${RULE}\n`);
    },
  };
}
