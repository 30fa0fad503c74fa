/**
 * A loopback stand-in for AWS Secrets Manager's `GetSecretValue` (JSON 1.1 protocol), so the bench's
 * cold start reads the settings secret as the deployed receiver does (the stack sets `SETTINGS_SECRET_ARN`
 * and keeps the webhook token, webhook URLs and signing keys there): that first SDK call (credentials,
 * signing, the protocol's parser) is part of every real cold start. The SDK goes to it through its own
 * `AWS_ENDPOINT_URL_SECRETS_MANAGER` setting.
 * @see https://docs.aws.amazon.com/secretsmanager/latest/apireference/API_GetSecretValue.html
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export const BENCH_SECRET_ARN =
  'arn:aws:secretsmanager:eu-west-1:123456789012:secret:llm-alert-pipeline-settings-AbCdEf';

export interface SecretsStandIn {
  /** Environment of a receiver reading `values` from this stand-in. */
  env: Record<string, string>;
  /** `GetSecretValue` requests answered. */
  reads(): number;
  close(): Promise<void>;
}

/** Serves `values` (setting name → value) as the settings secret's JSON `SecretString`. */
export async function startSecretsManager(values: Record<string, string>): Promise<SecretsStandIn> {
  let reads = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.headers['x-amz-target'] !== 'secretsmanager.GetSecretValue') {
        res
          .writeHead(400, { 'content-type': 'application/x-amz-json-1.1' })
          .end('{"__type":"InvalidRequestException","message":"bench: only GetSecretValue"}');
        return;
      }
      reads++;
      const body = {
        ARN: BENCH_SECRET_ARN,
        Name: 'llm-alert-pipeline-settings',
        VersionId: 'v1',
        VersionStages: ['AWSCURRENT'],
        SecretString: JSON.stringify(values),
        CreatedDate: 1_795_000_000,
      };
      res.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' }).end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    env: {
      SETTINGS_SECRET_ARN: BENCH_SECRET_ARN,
      AWS_ENDPOINT_URL_SECRETS_MANAGER: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    },
    reads: () => reads,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
