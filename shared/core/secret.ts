/**
 * Secrets of the configuration, and the one place that keeps them out of text we emit.
 *
 * A `Secret` prints as `<redacted>`, and on construction it registers the forms in which its value
 * could show up in someone else's text: a platform or proxy echoing a webhook path, an HTTP library
 * quoting the URL it failed to reach. {@link redactSecrets} scrubs those forms; the logger applies
 * it to every field it writes and the app to every response body, so no call site has to remember.
 */
import { inspect } from 'node:util';

/** What a scrubbed form is replaced with. */
export const REDACTED = '<redacted>';
/**
 * Shortest form scrubbed, characters: shorter strings are ordinary words (`hook`, `v2`, `T000`)
 * whose removal would garble messages, and too short to be a credential on their own.
 */
export const MIN_SECRET_FORM_CHARS = 8;

const registered = new Set<string>();
let pattern: RegExp | undefined;

/**
 * A configuration secret (webhook token, webhook URL with its key, signing secret).
 * Prints as `<redacted>` in logs, JSON, template strings and `util.inspect`; only `reveal()` gives the value.
 * Constructing one registers its {@link secretForms} for {@link redactSecrets}, for the life of the process.
 */
export class Secret {
  readonly #value: string;
  constructor(value: string) {
    this.#value = value;
    for (const form of secretForms(value)) registered.add(form);
    pattern = undefined;
  }
  /** The secret value. Call only where it is used (an HTTP header, a signature), never to log. */
  reveal(): string {
    return this.#value;
  }
  toString(): string {
    return REDACTED;
  }
  toJSON(): string {
    return REDACTED;
  }
  [inspect.custom](): string {
    return REDACTED;
  }
}

/**
 * The forms in which `value` may appear in text, each at least {@link MIN_SECRET_FORM_CHARS} long.
 * Any value: itself. A URL (a webhook URL's path and query are its credential, the host is public):
 * also the normalised URL, the path with and without its query and its leading slash, the query,
 * each query value, and each path segment that may be a credential ({@link credentialSegment}).
 * Every one of those also percent-encoded (`encodeURIComponent`) and with `/` JSON-escaped as `\/`.
 * A segment scrubbed on its own also catches encodings of the separators around it (`&#x2F;`, `%252F`).
 * @example secretForms('https://hooks.slack.com/services/T000/B000/XXXXXXXX')
 * // includes '/services/T000/B000/XXXXXXXX', 'services/T000/B000/XXXXXXXX', 'XXXXXXXX', '%2Fservices%2FT000%2FB000%2FXXXXXXXX'
 */
export function secretForms(value: string): string[] {
  const forms = [value, ...urlParts(value)].flatMap((form) => [form, encodeURIComponent(form), form.replaceAll('/', '\\/')]);
  return [...new Set(forms)].filter((form) => form.length >= MIN_SECRET_FORM_CHARS);
}

function urlParts(value: string): string[] {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return [];
  }
  if (!url.host) return [];
  const path = url.pathname;
  const segments = path.split('/').filter(Boolean);
  return [
    url.href,
    path + url.search,
    path,
    path.slice(1) + url.search,
    path.slice(1),
    url.search.slice(1),
    ...segments.filter(credentialSegment),
    ...[...url.searchParams.values()],
  ];
}

/**
 * Whether a path segment may be a credential on its own: tokens and ids mix in digits or capitals
 * (`T0123ABCD`, a 24-character Slack token, a UUID); a lower-case word (`services`, `open-apis`,
 * `escalation`) is part of the API's path or a proxy's route, and scrubbing it from every log
 * line would garble them. Such words are still scrubbed as part of the whole path.
 */
function credentialSegment(segment: string): boolean {
  return /[0-9A-Z]/.test(segment);
}

/**
 * Replaces every registered form of every {@link Secret} in `text` with `<redacted>` (longest form
 * first, ignoring case so that `%2f` and `%2F` both match).
 * @example redactSecrets('No route for POST /services/T000/B000/XXXXXXXX') // 'No route for POST <redacted>'
 */
export function redactSecrets(text: string): string {
  if (registered.size === 0) return text;
  pattern ??= new RegExp([...registered].sort((a, b) => b.length - a.length).map(escapeRegExp).join('|'), 'gi');
  return text.replace(pattern, REDACTED);
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
