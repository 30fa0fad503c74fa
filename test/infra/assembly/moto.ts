/**
 * A deploy rehearsal on moto's server mode (`moto_server`, the Python AWS emulator): the stack's
 * synthesized template created with CloudFormation's `CreateStack` through the real AWS SDK, its
 * function assets zipped and uploaded to the bucket `cdk deploy` uploads them to, and the bootstrap
 * version parameter the template's rule reads put where `cdk bootstrap` puts it.
 *
 * moto's CloudFormation cannot create every type the stack uses (`MOTO_LACKS`): those resources are taken
 * out of the template before `CreateStack`, and what referenced them gets a named placeholder. The settings
 * secret, which the receiver needs, is created in moto's Secrets Manager with the template's properties
 * instead, and its references become that secret's ARN. The other types' values are checked from the
 * synthesized template (stack, alarms, heartbeat and cfn-lint tests).
 * @see https://docs.getmoto.org/en/latest/docs/server_mode.html
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CloudFormationClient,
  CreateStackCommand,
  DescribeStacksCommand,
  ListStackResourcesCommand,
  type StackResourceSummary,
} from '@aws-sdk/client-cloudformation';
import { CreateBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { CreateSecretCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { PutParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import type { CfnResource, DeployedStack } from './deployed.js';
import { ACCOUNT, REGION } from './invoke.js';

/** Resource types moto 5's CloudFormation does not create (it skips them, and a reference to one fails). */
export const MOTO_LACKS = [
  'AWS::SecretsManager::Secret',
  'AWS::SNS::TopicPolicy',
  'AWS::Lambda::Url',
  'AWS::Scheduler::Schedule',
  'AWS::CloudWatch::Alarm',
] as const;

/** moto's fixed test credentials: any key is accepted, the account is {@link ACCOUNT}. */
export const MOTO_CLIENT = (endpoint: string) => ({
  endpoint,
  region: REGION,
  credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
});

export interface MotoServer {
  endpoint: string;
  close(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as AddressInfo;
  await new Promise((ok) => server.close(ok));
  return port;
}

/**
 * Starts `moto_server` on 127.0.0.1 at a free port and waits until it answers.
 * @throws when it has not answered within `timeoutMs` (default 30 s) or exited
 */
export async function startMoto(timeoutMs = 30_000): Promise<MotoServer> {
  const port = await freePort();
  const child: ChildProcess = spawn('moto_server', ['-H', '127.0.0.1', '-p', String(port)], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString('utf8')).slice(-4000);
  });
  const endpoint = `http://127.0.0.1:${port}`;
  const close = async () => {
    if (child.exitCode !== null) return;
    const exited = new Promise((ok) => child.once('exit', ok));
    child.kill('SIGTERM');
    await exited;
  };
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`moto_server exited (${child.exitCode}): ${stderr}`);
    if (Date.now() > deadline) {
      await close();
      throw new Error(`moto_server did not answer within ${timeoutMs} ms: ${stderr}`);
    }
    const up = await fetch(`${endpoint}/moto-api/`, { redirect: 'error' }).then(
      (r) => r.ok,
      () => false,
    );
    if (up) return { endpoint, close };
    await new Promise((ok) => setTimeout(ok, 100));
  }
}

/** A stack created on moto: its resources by logical id, and the settings secret created beside it. */
export interface MotoStack {
  status: string;
  resources: Map<string, StackResourceSummary>;
  settingsSecretArn: string;
  /** Logical ids taken out of the template because moto cannot create their type. */
  skipped: string[];
}

/** Every `{Ref: id}` and `{Fn::GetAtt: [id, …]}` in `value` replaced by `replace(id, intrinsic)` where it returns a value. */
function replaceReferences(value: unknown, replace: (id: string, intrinsic: object) => unknown): unknown {
  if (Array.isArray(value)) return value.map((v) => replaceReferences(v, replace));
  if (value === null || typeof value !== 'object') return value;
  const v = value as Record<string, any>;
  const id = typeof v.Ref === 'string' ? v.Ref : Array.isArray(v['Fn::GetAtt']) ? v['Fn::GetAtt'][0] : undefined;
  const replaced = id === undefined ? undefined : replace(id, v);
  if (replaced !== undefined) return replaced;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, replaceReferences(x, replace)]));
}

/** Zips `dir`'s contents (as `cdk deploy` zips an asset directory) with Python's zipfile, which moto already needs. */
function zipDirectory(dir: string): Buffer {
  const out = mkdtempSync(join(tmpdir(), 'moto-asset-'));
  try {
    execFileSync('python3', ['-m', 'zipfile', '-c', join(out, 'asset.zip'), ...readdirSync(dir)], { cwd: dir });
    return readFileSync(join(out, 'asset.zip'));
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/**
 * Creates `stack` on moto as `name`: assets uploaded, bootstrap version set, settings secret created,
 * then `CreateStack` (moto creates resources synchronously; the status is polled, bounded).
 * @throws on any SDK error, or when the stack does not reach a final status
 */
export async function deployToMoto(endpoint: string, stack: DeployedStack, name: string): Promise<MotoStack> {
  const client = MOTO_CLIENT(endpoint);
  const s3 = new S3Client({ ...client, forcePathStyle: true });
  const bucket = `cdk-hnb659fds-assets-${ACCOUNT}-${REGION}`;
  await s3.send(new CreateBucketCommand({ Bucket: bucket, CreateBucketConfiguration: { LocationConstraint: REGION } }));
  for (const fn of stack.functions)
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: fn.s3Key, Body: zipDirectory(fn.assetDir) }));
  await new SSMClient(client).send(
    new PutParameterCommand({ Name: '/cdk-bootstrap/hnb659fds/version', Value: '30', Type: 'String' }),
  );
  const resources: Record<string, CfnResource> = { ...stack.template.Resources };
  const [secretId, secret] = Object.entries(resources).find(([, r]) => r.Type === 'AWS::SecretsManager::Secret')!;
  const { ARN: settingsSecretArn } = await new SecretsManagerClient(client).send(
    new CreateSecretCommand({
      Name: `${name}-${secretId}`,
      Description: secret.Properties!.Description,
      SecretString: secret.Properties!.GenerateSecretString.SecretStringTemplate,
    }),
  );
  const skipped = Object.keys(resources).filter((id) =>
    (MOTO_LACKS as readonly string[]).includes(resources[id]!.Type),
  );
  for (const id of skipped) delete resources[id];
  const template = replaceReferences({ ...stack.template, Resources: resources }, (id, intrinsic) => {
    if (id === secretId) return settingsSecretArn;
    if (skipped.includes(id)) return `moto-lacks:${JSON.stringify(intrinsic)}`;
    return undefined;
  }) as object;
  const cfn = new CloudFormationClient(client);
  await cfn.send(
    new CreateStackCommand({
      StackName: name,
      TemplateBody: JSON.stringify(template),
      Capabilities: ['CAPABILITY_IAM'],
    }),
  );
  let status = 'CREATE_IN_PROGRESS';
  for (let i = 0; i < 100 && status.endsWith('_IN_PROGRESS'); i++) {
    if (i > 0) await new Promise((ok) => setTimeout(ok, 100));
    status = (await cfn.send(new DescribeStacksCommand({ StackName: name }))).Stacks![0]!.StackStatus!;
  }
  const { StackResourceSummaries = [] } = await cfn.send(new ListStackResourcesCommand({ StackName: name }));
  return {
    status,
    resources: new Map(StackResourceSummaries.map((r) => [r.LogicalResourceId!, r])),
    settingsSecretArn: settingsSecretArn!,
    skipped,
  };
}
