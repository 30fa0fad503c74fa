/**
 * Test helper: checks a request a loopback server received against AWS Signature Version 4, the
 * signature recomputed with the AWS SDK's own signer (`@smithy/signature-v4`) over the method, path,
 * query, signed headers and body as they arrived, at the request's own `x-amz-date`.
 * @see https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-create-signed-request.html
 */
import { Sha256 } from '@smithy/core/checksum';
import { SignatureV4 } from '@smithy/signature-v4';
import { expect } from 'vitest';
import type { RecordedRequest } from './loopback.js';

const AUTHORIZATION =
  /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/;

/** What the signer was expected to sign with. */
export interface ExpectedSigning {
  service: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  /** The port the request was sent to on 127.0.0.1 (part of the signed `host`). */
  port: number;
}

/**
 * Expects `request` signed for `expected`: the credential scope (key, region, service), `x-amz-date`,
 * `x-amz-security-token`, `x-amz-content-sha256` of the body received, `host` among the signed headers,
 * and the signature itself.
 */
export async function expectSigV4(request: RecordedRequest, expected: ExpectedSigning): Promise<void> {
  const authorization = String(request.headers.authorization);
  const match = AUTHORIZATION.exec(authorization);
  expect(match, authorization).not.toBeNull();
  const [, key, day, region, service, signedHeaders, signature] = match!;
  expect({ key, region, service }).toEqual({
    key: expected.accessKeyId,
    region: expected.region,
    service: expected.service,
  });
  const amzDate = String(request.headers['x-amz-date']);
  expect(amzDate).toMatch(new RegExp(`^${day}T\\d{6}Z$`));
  expect(request.headers['x-amz-security-token']).toBe(expected.sessionToken);
  const bodyHash = new Sha256();
  bodyHash.update(request.body);
  expect(request.headers['x-amz-content-sha256']).toBe(Buffer.from(await bodyHash.digest()).toString('hex'));
  const names = signedHeaders!.split(';');
  expect(names).toEqual(expect.arrayContaining(['host', 'x-amz-date', 'x-amz-content-sha256']));
  const url = new URL(request.path, `http://127.0.0.1:${expected.port}`);
  const query: Record<string, string | string[]> = {};
  for (const [name, value] of url.searchParams) {
    const known = query[name];
    query[name] = known === undefined ? value : [known, value].flat();
  }
  const signer = new SignatureV4({
    service: expected.service,
    region: expected.region,
    sha256: Sha256,
    credentials: {
      accessKeyId: expected.accessKeyId,
      secretAccessKey: expected.secretAccessKey,
      sessionToken: expected.sessionToken,
    },
  });
  const d = amzDate;
  const signingDate = new Date(
    `${d.slice(0, 4)}-${d.slice(4, 6)}-${d.slice(6, 8)}T${d.slice(9, 11)}:${d.slice(11, 13)}:${d.slice(13, 15)}Z`,
  );
  const resigned = await signer.sign(
    {
      method: request.method,
      protocol: 'http:',
      hostname: '127.0.0.1',
      port: expected.port,
      path: url.pathname,
      query,
      headers: Object.fromEntries(names.map((n) => [n, String(request.headers[n])])),
      body: request.body.length ? request.body.toString('utf8') : undefined,
    },
    { signingDate },
  );
  expect(String(resigned.headers.authorization)).toContain(`Signature=${signature}`);
}
