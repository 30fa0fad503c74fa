import { inspect } from 'node:util';

/**
 * A configuration secret (webhook token, webhook URL with its key, signing secret).
 * Prints as `<redacted>` in logs, JSON, template strings and `util.inspect`; only `reveal()` gives the value.
 */
export class Secret {
  readonly #value: string;
  constructor(value: string) {
    this.#value = value;
  }
  /** The secret value. Call only where it is used (an HTTP header, a signature), never to log. */
  reveal(): string {
    return this.#value;
  }
  toString(): string {
    return '<redacted>';
  }
  toJSON(): string {
    return '<redacted>';
  }
  [inspect.custom](): string {
    return '<redacted>';
  }
}
