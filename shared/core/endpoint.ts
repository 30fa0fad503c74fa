/**
 * The servers we query — Prometheus and Alertmanager — and the one place a request to either goes out
 * with its credentials: {@link endpointRequest}. The credentials are the ones Alertmanager's own
 * `http_config` offers (`authorization` as a bearer token, `basic_auth`, `http_headers`, `sigv4`), from
 * the settings `PROMETHEUS_BEARER_TOKEN`, `PROMETHEUS_BASIC_AUTH`, `PROMETHEUS_HEADERS`,
 * `PROMETHEUS_SIGV4_REGION` and the same four for `ALERTMANAGER_`. Secret values stay {@link Secret}s
 * until the request's headers are built, so they print as `<redacted>` and are scrubbed from any text
 * that quotes them. SigV4 signing (the AWS SDK's signer, AWS credentials from the SDK's chain) is loaded
 * on the first signed request only (`sigv4.ts`): a deployment without it never loads it.
 * @see https://prometheus.io/docs/alerting/latest/configuration/#http_config
 */
import { httpRequest, type HttpAnswer, type HttpRequestInit } from './http-request.js';
import { lazyAsync } from './lazy.js';
import type { Secret } from './secret.js';

/** How a server is reached, as configured; every field optional, at most one of the `authorization` kinds. */
export interface HttpCredentials {
  /** `Authorization: Bearer <token>` (`*_BEARER_TOKEN`). */
  bearerToken?: Secret;
  /** `user:password`, sent as `Authorization: Basic <base64>` (`*_BASIC_AUTH`; RFC 7617). */
  basicAuth?: Secret;
  /** Extra headers sent with every request, in order (`*_HEADERS`, e.g. `X-Scope-OrgID`). */
  headers?: readonly { name: string; value: Secret }[];
  /** Sign every request with AWS Signature Version 4 for service `aps` in this region (`*_SIGV4_REGION`). */
  sigv4Region?: string;
}

/** A server we query: Prometheus (`PROMETHEUS_URL`) or Alertmanager (`ALERTMANAGER_URL`). */
export interface Endpoint {
  /** Base URL without a trailing slash; API paths are appended to it. */
  url: string;
  /** What every request carries; unset: nothing. */
  credentials?: HttpCredentials;
}

/** The AWS credentials could not be had, so a request to a SigV4 endpoint was not sent. */
export class SigningError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SigningError';
  }
}

const loadSigner = lazyAsync(() => import('./sigv4.js'));

/**
 * Sends one request to `endpoint` (its URL followed by `pathAndQuery`) with its credentials, through
 * `httpRequest` (no redirects followed). With SigV4 the request is signed as sent: method, path, query,
 * the headers given, `host`, and the body's SHA-256.
 * @param pathAndQuery e.g. `/api/v1/query?query=up`, or `/api/v2/silences`
 * @throws SigningError when `sigv4Region` is set and no AWS credentials are found (nothing sent)
 * @throws what `httpRequest` throws (network errors, `AbortError`)
 */
export async function endpointRequest(
  endpoint: Endpoint,
  pathAndQuery: string,
  init: HttpRequestInit,
): Promise<HttpAnswer> {
  const url = new URL(endpoint.url + pathAndQuery);
  const credentials = endpoint.credentials;
  if (!credentials) return httpRequest(url, init);
  const headers = { ...init.headers, ...staticHeaders(credentials) };
  if (!credentials.sigv4Region) return httpRequest(url, { ...init, headers });
  let signed: { url: URL; headers: Record<string, string> };
  try {
    signed = await (await loadSigner()).signRequest(credentials.sigv4Region, { ...init, url, headers });
  } catch (err) {
    const { name, message } = err as Error;
    throw new SigningError(`no AWS credentials to sign with (${name}: ${message})`, { cause: err });
  }
  return httpRequest(signed.url, { ...init, headers: signed.headers });
}

/** The headers a request carries besides SigV4's: the authorization and the extra headers. */
function staticHeaders(credentials: HttpCredentials): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const { name, value } of credentials.headers ?? []) headers[name.toLowerCase()] = value.reveal();
  if (credentials.bearerToken) headers.authorization = `Bearer ${credentials.bearerToken.reveal()}`;
  if (credentials.basicAuth)
    headers.authorization = `Basic ${Buffer.from(credentials.basicAuth.reveal(), 'utf8').toString('base64')}`;
  return headers;
}
