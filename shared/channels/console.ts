/**
 * The fallback channel when none is configured: prints the plain-text notification, so a first
 * `npm start` shows what would have been sent.
 */
import type { Channel } from './types.js';
import { renderText } from './text.js';

/** Separates notifications in the output. */
const RULE = '─'.repeat(60);

/**
 * @param write where the text goes (default: stdout); receives one string per notification,
 *   the rendered text between two rules, ending in a newline
 */
export function createConsoleChannel(write: (s: string) => void = (s) => process.stdout.write(s)): Channel {
  return {
    name: 'console',
    async send(notification) {
      write(`${RULE}\n${renderText(notification)}\n${RULE}\n`);
    },
  };
}
