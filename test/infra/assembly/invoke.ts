/**
 * Runs a deployed function (`deployed.ts`) the way Lambda does: its asset's handler module cold-started in
 * a plain Node process (`invokeBundle`, shared with `npm run lambda:invoke`), with the environment the
 * template gives it — every reference resolved to a stand-in's name or ARN — plus what Lambda itself sets
 * and the AWS SDK's endpoint settings pointing at loopback stand-ins.
 */
import { invokeBundle, type Invocation } from '../../../scripts/lambda-local.js';
import { deployed, handlerModule, type CfnResource, type DeployedFunction } from './deployed.js';

export const REGION = 'eu-west-1';
export const ACCOUNT = '123456789012';

/** What a stand-in answers to: a physical id or ARN per logical id (`Ref`), and attributes (`Fn::GetAtt`). */
export interface Physical {
  ref: (logicalId: string, resource: CfnResource) => string;
  attribute: (logicalId: string, attribute: string, resource: CfnResource) => string;
}

/**
 * Names the stack's resources as CloudFormation would, in {@link REGION} and {@link ACCOUNT}: tables and
 * schedule groups by logical id, topics, queues, secrets, functions and roles by their ARNs.
 */
export const PHYSICAL: Physical = {
  ref(id, resource) {
    switch (resource.Type) {
      case 'AWS::SNS::Topic':
        return `arn:aws:sns:${REGION}:${ACCOUNT}:${id}`;
      case 'AWS::SecretsManager::Secret':
        return `arn:aws:secretsmanager:${REGION}:${ACCOUNT}:secret:${id}-AbCdEf`;
      case 'AWS::SQS::Queue':
        return `https://sqs.${REGION}.amazonaws.com/${ACCOUNT}/${id}`;
      default:
        return id;
    }
  },
  attribute(id, attribute, resource) {
    if (attribute !== 'Arn') throw new Error(`no stand-in for ${id}.${attribute}`);
    const service = { 'AWS::Lambda::Function': 'lambda', 'AWS::IAM::Role': 'iam', 'AWS::SQS::Queue': 'sqs' }[
      resource.Type
    ];
    if (service === 'lambda') return `arn:aws:lambda:${REGION}:${ACCOUNT}:function:${id}`;
    if (service === 'iam') return `arn:aws:iam::${ACCOUNT}:role/${id}`;
    if (service === 'sqs') return `arn:aws:sqs:${REGION}:${ACCOUNT}:${id}`;
    throw new Error(`no stand-in ARN for ${resource.Type}`);
  },
};

/**
 * The function's environment variables as Lambda would set them from the template, references resolved.
 * @throws on an intrinsic it cannot resolve (the template changed shape: teach it here)
 */
export function templateEnvironment(
  fn: DeployedFunction,
  resources: Record<string, CfnResource>,
): Record<string, string> {
  const resolve = (value: unknown): string => {
    if (typeof value === 'string') return value;
    const v = value as Record<string, any>;
    if (v.Ref) return PHYSICAL.ref(v.Ref, resources[v.Ref]!);
    if (v['Fn::GetAtt']) {
      const [id, attribute] = v['Fn::GetAtt'] as [string, string];
      return PHYSICAL.attribute(id, attribute, resources[id]!);
    }
    if (v['Fn::Join']) {
      const [sep, parts] = v['Fn::Join'] as [string, unknown[]];
      return parts.map(resolve).join(sep);
    }
    throw new Error(`${fn.path}: cannot resolve ${JSON.stringify(value)}`);
  };
  return Object.fromEntries(Object.entries(fn.environment).map(([k, v]) => [k, resolve(v)]));
}

/** Lambda unpacks the asset in `/var/task`; here it stays where `cdk synth` wrote it, so paths there move with it. */
function onTaskRoot(env: Record<string, string>, assetDir: string): Record<string, string> {
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v.replace(/^\/var\/task\//, `${assetDir}/`)]));
}

/** Where the AWS SDK in the function sends each service (`AWS_ENDPOINT_URL_<SERVICE>`), when stood in. */
export interface Endpoints {
  dynamodb?: string;
  sns?: string;
  secretsManager?: string;
  scheduler?: string;
  /** Lambda's own API (the receiver invoking itself for an alert set's next step). */
  lambda?: string;
}

export interface DeployedInvocation {
  /** Extra environment, after the template's (settings a user would put in the function, test-only URLs). */
  env?: Record<string, string>;
  endpoints: Endpoints;
  contexts?: object[];
  timeoutMs?: number;
}

/**
 * Cold-starts `fn` from its asset and runs `events` through its handler in order.
 * @throws when the process fails or times out (see `invokeBundle`)
 */
export function invokeDeployed(
  fn: DeployedFunction,
  events: unknown[],
  { env = {}, endpoints, contexts, timeoutMs }: DeployedInvocation,
): Promise<Invocation> {
  const { template } = deployed(fn.variant);
  const endpointEnv: Record<string, string | undefined> = {
    AWS_ENDPOINT_URL_DYNAMODB: endpoints.dynamodb,
    AWS_ENDPOINT_URL_SNS: endpoints.sns,
    AWS_ENDPOINT_URL_SECRETS_MANAGER: endpoints.secretsManager,
    AWS_ENDPOINT_URL_SCHEDULER: endpoints.scheduler,
    AWS_ENDPOINT_URL_LAMBDA: endpoints.lambda,
  };
  return invokeBundle(
    handlerModule(fn),
    {
      // What Lambda sets in every execution environment (the credentials are the role's session).
      AWS_REGION: REGION,
      AWS_DEFAULT_REGION: REGION,
      AWS_ACCESS_KEY_ID: 'ASIAEXAMPLEEXAMPLE00',
      AWS_SECRET_ACCESS_KEY: 'deployed-asset-test-secret-key',
      AWS_SESSION_TOKEN: 'deployed-asset-test-session-token',
      AWS_LAMBDA_FUNCTION_NAME: fn.logicalId,
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '512',
      LAMBDA_TASK_ROOT: fn.assetDir,
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      ...onTaskRoot(templateEnvironment(fn, template.Resources), fn.assetDir),
      ...Object.fromEntries(Object.entries(endpointEnv).filter((e): e is [string, string] => e[1] !== undefined)),
      ...env,
    },
    events,
    { contexts, timeoutMs: timeoutMs ?? 60_000 },
  );
}
