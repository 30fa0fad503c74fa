/**
 * Secrets of the configuration, and the one place that keeps them out of text we emit.
 *
 * A `Secret` prints as `<redacted>`, and on construction it registers the forms in which its value
 * could show up in someone else's text: a platform or proxy echoing a webhook path, an HTTP library
 * quoting the URL it failed to reach. {@link redactSecrets} scrubs those forms; the logger applies
 * it to every field it writes and the app to every response body, so no call site has to remember.
 */
import { inspect } from 'node:util';
import { truncateChars } from './truncate.js';

/** What a scrubbed form is replaced with. */
export const REDACTED = '<redacted>';
/**
 * Shortest form scrubbed, characters: shorter strings are ordinary words (`hook`, `v2`, `T000`)
 * whose removal would garble messages, and too short to be a credential on their own.
 */
export const MIN_SECRET_FORM_CHARS = 8;

const registered = new Set<string>();
let replacers: ((text: string) => string)[] | undefined;

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
    replacers = undefined;
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
 * Every one of those also percent-encoded (`encodeURIComponent`) and with `/` JSON-escaped as `\/`;
 * the value and its URL parts also as they read inside base64 and base64url text ({@link base64Forms}).
 * A segment scrubbed on its own also catches encodings of the separators around it (`&#x2F;`, `%252F`).
 * @example secretForms('https://hooks.slack.com/services/T000/B000/XXXXXXXX')
 * // includes '/services/T000/B000/XXXXXXXX', 'services/T000/B000/XXXXXXXX', 'XXXXXXXX', '%2Fservices%2FT000%2FB000%2FXXXXXXXX'
 */
export function secretForms(value: string): string[] {
  const parts = [value, ...urlParts(value)];
  const forms = parts.flatMap((form) => [form, encodeURIComponent(form), form.replaceAll('/', '\\/')]);
  return [...new Set([...forms, ...parts.flatMap(base64Forms)])].filter((form) => form.length >= MIN_SECRET_FORM_CHARS);
}

/**
 * How `part` reads inside base64 or base64url text (a proxy or platform echoing the request URL
 * encoded), wherever it sits in the encoded bytes. Base64 encodes 3 bytes as 4 characters, so a
 * substring starting at byte offset 0, 1 or 2 (mod 3) encodes three different ways: for each, the
 * encoding of `part` behind that many filler bytes, keeping only the 4-character groups made of
 * `part`'s bytes alone (the first group shares bits with what precedes, the last with what follows).
 * Six strings per part, computed once per secret: redaction stays a few precompiled patterns.
 * @see https://www.rfc-editor.org/rfc/rfc4648#section-4 (base64), #section-5 (base64url)
 */
export function base64Forms(part: string): string[] {
  const bytes = Buffer.from(part, 'utf8');
  return [0, 1, 2].flatMap((offset) => {
    const groups = Math.floor((offset + bytes.length) / 3);
    const first = offset === 0 ? 0 : 1;
    if (groups <= first) return [];
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes])
      .toString('base64')
      .slice(first * 4, groups * 4);
    return [encoded, encoded.replaceAll('+', '-').replaceAll('/', '_')];
  });
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
  // Without its slash, a one-word path (`/escalation` on a test or proxy URL) is an ordinary word.
  const bare = path.slice(1);
  const bareForms = bare.includes('/') || credentialSegment(bare) ? [bare + url.search, bare] : [];
  return [
    url.href,
    path + url.search,
    path,
    ...bareForms,
    url.search.slice(1),
    ...segments.filter(credentialSegment),
    ...[...url.searchParams.values()],
    ...queryValues(url.search),
  ];
}

/**
 * Each query value as written, percent-decoded with `+` kept (`AbC+dEf`) and fully percent-encoded
 * (`AbC%2BdEf`): `searchParams` gives only the form-decoded one (`AbC dEf`), while a client or proxy echoes
 * the value as sent, decoded as a URL, or encoded again.
 */
function queryValues(search: string): string[] {
  return search
    .slice(1)
    .split('&')
    .flatMap((pair) => {
      const raw = pair.slice(pair.indexOf('=') + 1);
      let decoded = raw;
      try {
        decoded = decodeURIComponent(raw);
      } catch {
        // A malformed escape: the raw form alone.
      }
      return [raw, decoded, encodeURIComponent(decoded)];
    });
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
  replacers ??= buildReplacers([...registered].sort((a, b) => b.length - a.length));
  return replacers.reduce((out, replace) => replace(out), text);
}

/** Pattern text per regular expression: V8 refuses far larger ones ("Regular expression too large"). */
const MAX_PATTERN_CHARS = 16_384;

/**
 * The forms (longest first) as alternations of at most {@link MAX_PATTERN_CHARS} characters each. A group
 * that still does not compile is replaced literally, case-sensitively; a compile error is never rethrown,
 * because V8's message quotes the pattern, which is every secret.
 */
function buildReplacers(forms: string[]): ((text: string) => string)[] {
  const groups: string[][] = [];
  let size = 0;
  for (const form of forms) {
    const group = groups.at(-1);
    if (!group || size + form.length > MAX_PATTERN_CHARS) {
      groups.push([form]);
      size = form.length;
    } else {
      group.push(form);
      size += form.length;
    }
  }
  return groups.map((group) => {
    try {
      const pattern = new RegExp(group.map(escapeRegExp).join('|'), 'gi');
      pattern.exec(''); // V8 compiles on first use: a pattern too large fails here, not in a caller's log line.
      pattern.lastIndex = 0;
      return (text: string) => text.replace(pattern, REDACTED);
    } catch {
      return (text: string) => group.reduce((out, form) => out.split(form).join(REDACTED), text);
    }
  });
}

/**
 * `text` as an error message may quote it: secrets redacted ({@link redactSecrets}) first, then
 * whitespace runs folded to one space, then cut to `maxChars` (ending in `…`). Redacting after the
 * cut would miss a secret the cut split in two, and leave its first half in the message.
 * @example redactedExcerpt(`${'x'.repeat(190)} hook=/open-apis/bot/v2/hook/0f3a…`, 200) // 'xxx… hook=<redacted>'
 */
export function redactedExcerpt(text: string, maxChars: number): string {
  return truncateChars(redactSecrets(text).replace(/\s+/g, ' ').trim(), maxChars);
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
