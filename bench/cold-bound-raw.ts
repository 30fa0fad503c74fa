/**
 * A bound, not a product: the requests of `cold-bound-sdk.ts` (the settings secret at init; BatchGetItem,
 * PutItem, SNS Publish, UpdateItem on the first invocation) as plain `node:http` posts of the same wire
 * formats. Not SigV4-signed (the loopback stand-ins check the `Authorization` scheme, not the signature),
 * but each request does a signature's hashing work (the payload's SHA-256 and the five HMAC-SHA256 of
 * SigV4's key derivation and signature). What a cold start would cost with no AWS client at all: the floor
 * any lighter client approaches.
 */
import { createHash, createHmac } from 'node:crypto';
import { request } from 'node:http';

/** SigV4's hashing work for `body`, in an `Authorization` header of its scheme (not a valid signature). */
function authorization(body: string): string {
  let key: Buffer | string = 'AWS4bench';
  for (const part of ['20261201', 'eu-west-1', 'service', 'aws4_request'])
    key = createHmac('sha256', key).update(part).digest();
  const signature = createHmac('sha256', key).update(createHash('sha256').update(body).digest('hex')).digest('hex');
  return `AWS4-HMAC-SHA256 Credential=bench/20261201/eu-west-1/service/aws4_request, SignedHeaders=host, Signature=${signature}`;
}

function post(endpoint: string, headers: Record<string, string>, body: string): Promise<string> {
  const url = new URL(endpoint);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: '/',
        method: 'POST',
        headers: {
          ...headers,
          'x-amz-date': new Date().toISOString().replace(/[-:]|\.\d{3}/g, ''),
          authorization: authorization(body),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => (res.statusCode === 200 ? resolve(text) : reject(new Error(`${res.statusCode} ${text}`))));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const env = process.env as Record<string, string>;
const json = (target: string, version: '1.0' | '1.1') => ({
  'content-type': `application/x-amz-json-${version}`,
  'x-amz-target': target,
});
const dynamodb = (op: string, input: unknown) =>
  post(env.AWS_ENDPOINT_URL_DYNAMODB!, json(`DynamoDB_20120810.${op}`, '1.0'), JSON.stringify(input));
const secret = JSON.parse(
  await post(
    env.AWS_ENDPOINT_URL_SECRETS_MANAGER!,
    json('secretsmanager.GetSecretValue', '1.1'),
    JSON.stringify({ SecretId: env.SETTINGS_SECRET_ARN }),
  ),
) as {
  SecretString?: string;
};
const TableName = env.TABLE_NAME!;

export async function handler(): Promise<{ statusCode: number }> {
  const pk = { S: `bound-raw-${process.pid}-${Date.now()}` };
  await dynamodb('BatchGetItem', { RequestItems: { [TableName]: { Keys: [{ pk }] } } });
  await dynamodb('PutItem', {
    TableName,
    Item: { pk, v: { N: '1' } },
    ConditionExpression: 'attribute_not_exists(pk)',
  });
  const publish = new URLSearchParams({
    Action: 'Publish',
    Version: '2010-03-31',
    TopicArn: env.SNS_TOPIC_ARN!,
    Subject: 'bound',
    Message: 'bound',
  });
  await post(env.AWS_ENDPOINT_URL_SNS!, { 'content-type': 'application/x-www-form-urlencoded' }, publish.toString());
  await dynamodb('UpdateItem', {
    TableName,
    Key: { pk },
    UpdateExpression: 'SET v = :v',
    ExpressionAttributeValues: { ':v': { N: '2' } },
  });
  return { statusCode: secret.SecretString ? 200 : 500 };
}
