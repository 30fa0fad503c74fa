/**
 * The credentials settings of Prometheus and Alertmanager, as Alertmanager's own `http_config` offers
 * them: `<SERVER>_BEARER_TOKEN` (`authorization`), `<SERVER>_BASIC_AUTH` (`basic_auth`, `user:password`),
 * `<SERVER>_HEADERS` (`http_headers`, one `Name: value` per line) and `<SERVER>_SIGV4_REGION` (`sigv4`,
 * service `aps`), for `<SERVER>` = `PROMETHEUS` and `ALERTMANAGER`. `config.ts` declares them in its schema
 * with these rules, checks them together with {@link credentialProblems} and builds what `core/endpoint.ts`
 * sends with {@link credentialsOf}. Messages name the setting and never its value; the first three are
 * secret settings (read from the settings secret in AWS).
 * @see https://prometheus.io/docs/alerting/latest/configuration/#http_config
 */
import * as z from '../core/zod.js';
import type { HttpCredentials } from '../core/endpoint.js';
import { matching, requires } from '../core/settings.js';
import { Secret } from '../core/secret.js';

/** The servers with credentials settings: the prefix of each of their settings. */
export type Server = 'PROMETHEUS' | 'ALERTMANAGER';

/** A bearer token as sent in a header: printable ASCII without spaces (RFC 6750's b64token and more, as Alertmanager takes). */
export const bearerToken = () =>
  matching(/^[\x21-\x7e]+$/, 'must be the token alone (printable ASCII, no spaces; without "Bearer ")');

/** `user:password` (RFC 7617: the user without `:`, neither with control characters). */
export const basicAuth = () =>
  matching(/^[^:\x00-\x1f\x7f]+:[^\x00-\x1f\x7f]*$/, 'must be user:password (a user without ":", then the password)');

/** An AWS region, e.g. `eu-west-1`, `us-gov-west-1`, `cn-north-1`. */
export const awsRegion = () => matching(/^[a-z]{2}(?:-[a-z]+){1,3}-\d{1,2}$/, 'must be an AWS region, e.g. eu-west-1');

/** RFC 9110's `token`: what a header name is made of. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Control characters other than tab, which a header value may not hold. */
const CONTROL = /[\x00-\x08\x0a-\x1f\x7f]/;
/**
 * Characters outside ASCII: HTTP carries a header value as bytes, and Node's `fetch` sends U+0080–U+00FF
 * as one Latin-1 byte each (`é` arrives as byte E9, not UTF-8) and refuses anything higher at the first
 * request, so a server never sees the value as configured.
 */
const NOT_ASCII = /[^\x00-\x7f]/;

/**
 * Headers the pipeline sets itself, which a line of `<SERVER>_HEADERS` may not replace: the request's own
 * framing, its `accept`, and SigV4's. `authorization` has settings of its own.
 */
const RESERVED_HEADERS = [
  'host',
  'content-length',
  'content-type',
  'transfer-encoding',
  'connection',
  'accept',
  'x-amz-date',
  'x-amz-security-token',
  'x-amz-content-sha256',
];

/**
 * `Name: value` lines, e.g. `X-Scope-OrgID: team-a` (blank lines skipped, spaces around name and value
 * removed), as `{ name, value }` pairs in order.
 * @param server names the settings to use instead of an `Authorization` line
 */
export function extraHeaders(server: Server) {
  return z.pipe(
    z.string(),
    z.transform((text, ctx) => {
      const headers: { name: string; value: string }[] = [];
      const problems: string[] = [];
      text.split('\n').forEach((raw, i) => {
        const line = raw.trim();
        if (!line) return;
        const problem = headerProblem(line, headers, server);
        if (problem) problems.push(`line ${i + 1}: ${problem}`);
        else
          headers.push({
            name: line.slice(0, line.indexOf(':')).trim(),
            value: line.slice(line.indexOf(':') + 1).trim(),
          });
      });
      for (const message of problems) ctx.issues.push({ code: 'custom', message, input: '' });
      return headers;
    }),
  );
}

/** What is wrong with one line, or `undefined`; names the header but never quotes its value. */
function headerProblem(line: string, before: { name: string }[], server: Server): string | undefined {
  const colon = line.indexOf(':');
  if (colon < 0) return 'must be Name: value';
  const name = line.slice(0, colon).trim();
  const lower = name.toLowerCase();
  if (!HEADER_NAME.test(name)) return 'the name before ":" is not a header name (letters, digits, - and the like)';
  if (CONTROL.test(line)) return `the value of ${name} has control characters`;
  if (NOT_ASCII.test(line)) return `the value of ${name} has characters outside ASCII (percent-encode them)`;
  if (lower === 'authorization') return `set ${server}_BEARER_TOKEN or ${server}_BASIC_AUTH instead of Authorization`;
  if (RESERVED_HEADERS.includes(lower)) return `${name} is set by the pipeline itself`;
  if (before.some((h) => h.name.toLowerCase() === lower)) return `${name} is given twice`;
  return undefined;
}

/** The parsed values of one server's settings, as `config.ts`'s schema yields them. */
export interface CredentialValues {
  bearerToken?: string;
  basicAuth?: string;
  headers?: { name: string; value: string }[];
  sigv4Region?: string;
}

/** One server's four settings read from the parsed environment. */
export function credentialValues(e: Record<string, unknown>, server: Server): CredentialValues {
  return {
    bearerToken: e[`${server}_BEARER_TOKEN`] as string | undefined,
    basicAuth: e[`${server}_BASIC_AUTH`] as string | undefined,
    headers: e[`${server}_HEADERS`] as { name: string; value: string }[] | undefined,
    sigv4Region: e[`${server}_SIGV4_REGION`] as string | undefined,
  };
}

/**
 * Settings of one server that contradict each other: more than one way to fill `Authorization` (a token,
 * a user and password, a SigV4 signature), or credentials for a server whose URL is not set.
 */
export function credentialProblems(e: Record<string, unknown>, server: Server): string[] {
  const authorization = ['BEARER_TOKEN', 'BASIC_AUTH', 'SIGV4_REGION'].filter((s) => e[`${server}_${s}`] !== undefined);
  const problems = authorization
    .slice(1)
    .map(
      (s) => `${server}_${s}: set with ${server}_${authorization[0]}: choose one (each fills the Authorization header)`,
    );
  for (const s of ['BEARER_TOKEN', 'BASIC_AUTH', 'HEADERS', 'SIGV4_REGION'])
    problems.push(...requires(e, `${server}_${s}`, `${server}_URL`, 'the credentials are for that server'));
  return problems;
}

/**
 * What every request to the server carries, secrets wrapped (they print as `<redacted>` and are scrubbed
 * from logs): the token, the user and password together and the password alone, each header's value.
 * @returns `undefined` when none is set
 */
export function credentialsOf(values: CredentialValues): HttpCredentials | undefined {
  const { bearerToken, basicAuth, headers, sigv4Region } = values;
  if (!bearerToken && !basicAuth && !headers?.length && !sigv4Region) return undefined;
  // The password on its own too: a proxy's page may quote it without the user.
  if (basicAuth) new Secret(basicAuth.slice(basicAuth.indexOf(':') + 1));
  return {
    ...(bearerToken && { bearerToken: new Secret(bearerToken) }),
    ...(basicAuth && { basicAuth: new Secret(basicAuth) }),
    ...(headers?.length && { headers: headers.map((h) => ({ name: h.name, value: new Secret(h.value) })) }),
    ...(sigv4Region && { sigv4Region }),
  };
}
