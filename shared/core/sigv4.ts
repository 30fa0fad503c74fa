/**
 * AWS Signature Version 4 for requests to Amazon Managed Service for Prometheus (service `aps`), with
 * the AWS SDK's own signer (`@smithy/signature-v4`, what every SDK client signs with) and credentials
 * from the SDK's default chain (`@aws-sdk/credential-provider-node`: in Lambda the role's session in the
 * environment; on EKS a web identity; on EC2 the instance role…). Loaded by `endpoint.ts` on the first
 * signed request only: both libraries are already in the Lambda bundle for the SDK clients, and this
 * chunk only joins them.
 * @see https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-create-signed-request.html
 * @see https://docs.aws.amazon.com/prometheus/latest/userguide/AMP-secure-querying.html
 */
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { Sha256 } from '@smithy/core/checksum';
import { escapeUri } from '@smithy/core/protocols';
import { SignatureV4 } from '@smithy/signature-v4';
import type { HttpRequestInit } from './http-request.js';

/** The signing service: Amazon Managed Service for Prometheus (its query and alert manager APIs). */
export const SIGV4_SERVICE = 'aps';

/** One chain for the process: it caches the credentials until they are about to expire. */
let credentials: ReturnType<typeof defaultProvider> | undefined;
const signers = new Map<string, SignatureV4>();

function signerFor(region: string): SignatureV4 {
  let signer = signers.get(region);
  if (!signer) {
    credentials ??= defaultProvider();
    signer = new SignatureV4({ service: SIGV4_SERVICE, region, credentials, sha256: Sha256 });
    signers.set(region, signer);
  }
  return signer;
}

/**
 * Signs one request as it will be sent. The query is sent encoded as SigV4 encodes it (RFC 3986, a
 * space as `%20`, never `+`), so the server's canonical request is the one signed whatever it makes of `+`.
 * @param region the signing region (`*_SIGV4_REGION`)
 * @param request method, URL, headers (names lower-case) and body as they will be sent
 * @returns the URL to send to, and the headers to send: the given ones plus `host`, `x-amz-date`,
 *   `x-amz-content-sha256`, `x-amz-security-token` (temporary credentials) and `authorization`
 * @throws the SDK's `CredentialsProviderError` when its chain finds no credentials
 */
export async function signRequest(
  region: string,
  request: HttpRequestInit & { url: URL; headers: Record<string, string> },
): Promise<{ url: URL; headers: Record<string, string> }> {
  const { url } = request;
  const query: Record<string, string | string[]> = {};
  for (const [name, value] of url.searchParams) {
    const known = query[name];
    query[name] = known === undefined ? value : [known, value].flat();
  }
  const signed = await signerFor(region).sign({
    method: request.method,
    protocol: url.protocol,
    hostname: url.hostname,
    port: url.port ? Number(url.port) : undefined,
    path: url.pathname,
    query,
    headers: { ...request.headers, host: url.host },
    body: request.body,
  });
  const sent = new URL(url.href);
  sent.search = [...url.searchParams].map(([name, value]) => `${escapeUri(name)}=${escapeUri(value)}`).join('&');
  return { url: sent, headers: signed.headers };
}
