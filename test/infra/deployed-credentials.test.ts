/**
 * The AWS SDK's credential chain in the deployed receiver. Lambda gives a function its role's session in
 * the environment (`AWS_ACCESS_KEY_ID`, …), which the SDK reads at once; every other source is a chunk
 * that only `await import()` reaches. Run once without those variables, the chain walks its sources
 * (SSO, the shared config and credentials files, `credential_process`, a web identity token) and takes
 * its credentials from where a container gets them (`AWS_CONTAINER_CREDENTIALS_FULL_URI`, a loopback
 * endpoint here); once with a web identity token (`AWS_WEB_IDENTITY_TOKEN_FILE` + `AWS_ROLE_ARN`, as on
 * EKS), from a loopback STS. Each signs the DynamoDB calls of a delivered webhook.
 * @see https://docs.aws.amazon.com/sdkref/latest/guide/standardized-credentials.html
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { functionUrlEvent } from '../../scripts/lambda-local.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import { fixtureText } from '../helpers/fixtures.js';
import { startLoopback, type Loopback } from '../helpers/loopback.js';
import { startSnsPlatform, type SnsPlatform } from '../integration/channels/platforms.js';
import { startSecretsManager, type SecretsManagerStandIn } from './assembly/aws-stand-ins.js';
import { chunkCoverage } from './assembly/chunks.js';
import { expectClaimedChunksRan } from './assembly/claims.js';
import { deployed, deployedFunction } from './assembly/deployed.js';
import { invokeDeployed, templateEnvironment } from './assembly/invoke.js';

const TOKEN = 'deployed-credentials-token-0123456789';
const ACCESS_KEY = 'ASIACONTAINER0000001';
const STS_KEY = 'ASIAWEBIDENTITY00001';

describe('the deployed receiver takes credentials from the SDK chain', () => {
  const receiver = deployedFunction('default', 'Receiver/Function');
  const env = templateEnvironment(receiver, deployed('default').template.Resources);
  const coverage = chunkCoverage(receiver);
  const home = mkdtempSync(join(tmpdir(), 'credentials-home-'));
  let db: LocalDynamoDb;
  let sns: SnsPlatform;
  let secrets: SecretsManagerStandIn;
  let container: Loopback;
  let sts: Loopback;

  beforeAll(async () => {
    [db, sns] = await Promise.all([startLocalDynamoDb(env.TABLE_NAME!), startSnsPlatform()]);
    secrets = await startSecretsManager({ [env.SETTINGS_SECRET_ARN!]: { WEBHOOK_TOKEN: TOKEN } });
    const expiration = new Date(Date.now() + 3600_000).toISOString();
    container = await startLoopback({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        AccessKeyId: ACCESS_KEY,
        SecretAccessKey: 'container-secret',
        Token: 'container-session',
        Expiration: expiration,
      }),
    });
    sts = await startLoopback({
      status: 200,
      headers: { 'content-type': 'text/xml' },
      body: `<AssumeRoleWithWebIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleWithWebIdentityResult><Credentials><AccessKeyId>${STS_KEY}</AccessKeyId><SecretAccessKey>sts-secret</SecretAccessKey><SessionToken>sts-session</SessionToken><Expiration>${expiration}</Expiration></Credentials><AssumedRoleUser><Arn>arn:aws:sts::123456789012:assumed-role/receiver/pod</Arn><AssumedRoleId>AROAEXAMPLE:pod</AssumedRoleId></AssumedRoleUser></AssumeRoleWithWebIdentityResult><ResponseMetadata><RequestId>00000000-0000-0000-0000-000000000001</RequestId></ResponseMetadata></AssumeRoleWithWebIdentityResponse>`,
    });
  });
  afterAll(async () => {
    await Promise.allSettled([db, sns, secrets, container, sts].map((s) => s?.close()));
    rmSync(home, { recursive: true, force: true });
  });

  /** One webhook, the environment's credentials replaced by `credentials`; the key id the DynamoDB calls were signed with. */
  async function deliverWith(credentials: Record<string, string>): Promise<string[]> {
    const { results } = await invokeDeployed(
      receiver,
      [functionUrlEvent(fixtureText('firing-kv-cache-critical'), { authorization: `Bearer ${TOKEN}` })],
      {
        endpoints: { dynamodb: db.endpoint, sns: sns.endpoint, secretsManager: secrets.endpoint },
        env: {
          AWS_ACCESS_KEY_ID: '',
          AWS_SECRET_ACCESS_KEY: '',
          AWS_SESSION_TOKEN: '',
          HOME: home,
          AWS_CONFIG_FILE: join(home, 'config'),
          AWS_SHARED_CREDENTIALS_FILE: join(home, 'credentials'),
          NODE_V8_COVERAGE: coverage.dir,
          ...credentials,
        },
      },
    );
    expect(results[0]).toMatchObject({ statusCode: 200 });
    return secrets.server.requests
      .splice(0)
      .map((r) => /Credential=([A-Z0-9]+)\//.exec(r.headers.authorization ?? '')?.[1] ?? '');
  }

  it("a container's credentials endpoint, after the chain's other sources found nothing", async () => {
    const keys = await deliverWith({
      AWS_CONTAINER_CREDENTIALS_FULL_URI: `${container.url}/v2/credentials/receiver`,
      AWS_CONTAINER_AUTHORIZATION_TOKEN: 'container-authorization',
    });
    expect(keys).toEqual([ACCESS_KEY]);
    expect(container.requests[0]).toMatchObject({
      path: '/v2/credentials/receiver',
      headers: expect.objectContaining({ authorization: 'container-authorization' }),
    });
  }, 60_000);

  it('a web identity token exchanged at STS (AssumeRoleWithWebIdentity)', async () => {
    const tokenFile = join(home, 'web-identity-token');
    writeFileSync(tokenFile, 'eyJhbGciOiJSUzI1NiJ9.web-identity.token');
    const keys = await deliverWith({
      AWS_WEB_IDENTITY_TOKEN_FILE: tokenFile,
      AWS_ROLE_ARN: 'arn:aws:iam::123456789012:role/receiver',
      AWS_ROLE_SESSION_NAME: 'pod',
      AWS_ENDPOINT_URL_STS: sts.url,
    });
    expect(keys).toEqual([STS_KEY]);
    const form = new URLSearchParams(sts.requests[0]!.body.toString('utf8'));
    expect(form.get('Action')).toBe('AssumeRoleWithWebIdentity');
    expect(form.get('WebIdentityToken')).toBe('eyJhbGciOiJSUzI1NiJ9.web-identity.token');
  }, 60_000);

  it('loaded and called the credential chain chunks it answers for', () => {
    expectClaimedChunksRan(coverage, 'deployed-credentials.test.ts');
  });
});
