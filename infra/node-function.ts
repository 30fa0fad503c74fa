/**
 * Our defaults for every Lambda of the stack, in one place so the receiver and the escalation check
 * cannot drift: the newest Node.js runtime this CDK version offers, on arm64, ESM bundled by the
 * local esbuild (no Docker), source maps, the AWS SDK taken from the runtime, a log group with a
 * month's retention, and a role of its own that may only write to that log group until a helper
 * here grants exactly what the code sends (see test/infra/iam.test.ts).
 */
import { fileURLToPath } from 'node:url';
import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat, type ICommandHooks } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';

export const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The newest Node.js Lambda runtime of aws-cdk-lib 2.276 (cdk-nag's L1 and LambdaLatestVersion check it). */
export const LAMBDA_RUNTIME = Runtime.NODEJS_24_X;
/** Its Node major: the esbuild target, and the second Node `.ci/run` runs the test suite on. */
export const LAMBDA_NODE_MAJOR = Number(/^nodejs(\d+)\.x$/.exec(LAMBDA_RUNTIME.name)![1]);

/**
 * What the stores in `shared/` send to the dedupe table (lib-dynamodb `Get`, `Put`, `Update`,
 * `BatchGet`, `BatchWrite` commands), and nothing else: no `Scan`, `Query`, `DeleteItem` or
 * `DescribeTable` as `grantReadWriteData` would add. test/infra/iam.test.ts checks it against the code.
 */
export const TABLE_ACTIONS = ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:BatchGetItem', 'dynamodb:BatchWriteItem'];

/** The esbuild settings of every Lambda bundle besides its ESM format; test/infra/lambda-bundle-inputs.test.ts bundles with them. */
export const LAMBDA_BUNDLING = {
  // esbuild's ESM output has no `require`; CommonJS dependencies still call it.
  banner: "import { createRequire as __cjsRequire } from 'node:module'; const require = __cjsRequire(import.meta.url);",
  mainFields: ['module', 'main'],
  target: `node${LAMBDA_NODE_MAJOR}`,
  minify: true,
  sourceMap: true,
  // The Node.js runtimes ship AWS SDK v3.
  externalModules: ['@aws-sdk/*'],
};

export interface NodeFunctionProps {
  /** Entry file exporting `handler`. */
  entry: string;
  memoryMiB: number;
  timeoutSeconds: number;
  environment: Record<string, string>;
  /** Extra files for the bundle (e.g. the routing file). */
  commandHooks?: ICommandHooks;
}

/** Creates `<id>Logs` (the log group), `<id>Role` and `<id>` (the function) in `scope`; `Function` drops the prefix. */
export function nodeFunction(scope: Construct, id: string, props: NodeFunctionProps): { function: NodejsFunction; logGroup: LogGroup } {
  const prefix = id === 'Function' ? '' : id;
  const logGroup = new LogGroup(scope, `${prefix}Logs`, {
    retention: RetentionDays.ONE_MONTH,
    // The lines expire within a month anyway; deleting the stack should not leave the group behind.
    removalPolicy: RemovalPolicy.DESTROY,
  });
  // Not AWSLambdaBasicExecutionRole: that one may create and write every log group of the account.
  const role = new Role(scope, `${prefix}Role`, { assumedBy: new ServicePrincipal('lambda.amazonaws.com') });
  role.addToPrincipalPolicy(new PolicyStatement({ actions: ['logs:CreateLogStream', 'logs:PutLogEvents'], resources: [logGroup.logGroupArn] }));
  const fn = new NodejsFunction(scope, id, {
    entry: props.entry,
    handler: 'handler',
    projectRoot: REPO_ROOT,
    depsLockFilePath: `${REPO_ROOT}package-lock.json`,
    runtime: LAMBDA_RUNTIME,
    architecture: Architecture.ARM_64,
    memorySize: props.memoryMiB,
    timeout: Duration.seconds(props.timeoutSeconds),
    logGroup,
    role,
    environment: { NODE_OPTIONS: '--enable-source-maps', ...props.environment },
    bundling: {
      forceDockerBundling: false,
      // ESM because the entries read the settings secret with top-level await.
      format: OutputFormat.ESM,
      ...LAMBDA_BUNDLING,
      ...(props.commandHooks ? { commandHooks: props.commandHooks } : {}),
    },
  });
  Validations.of(fn).acknowledge({
    id: 'Serverless-LambdaTracing',
    reason: 'X-Ray active tracing needs xray:PutTraceSegments and PutTelemetryRecords on Resource "*" (no resource-level permissions) while no code sends a segment; every log line carries the awsRequestId and the ops dashboard covers errors and duration.',
  });
  return { function: fn, logGroup };
}

/** Adds one `Allow` statement to the function's role. */
export function allow(fn: NodejsFunction, actions: string[], resources: string[], conditions?: Record<string, Record<string, unknown>>): void {
  fn.addToRolePolicy(new PolicyStatement({ actions, resources, conditions }));
}

/**
 * Allows {@link TABLE_ACTIONS} on the dedupe table and sets `TABLE_NAME`, together, so the grant
 * and the setting cannot drift apart between the functions that share the table.
 */
export function wireTable(fn: NodejsFunction, table: ITable): void {
  allow(fn, TABLE_ACTIONS, [table.tableArn]);
  fn.addEnvironment('TABLE_NAME', table.tableName);
}

/** Allows `secretsmanager:GetSecretValue` (all the code sends) on the settings secret and sets `SETTINGS_SECRET_ARN` (read at cold start). */
export function wireSettingsSecret(fn: NodejsFunction, secret: ISecret): void {
  allow(fn, ['secretsmanager:GetSecretValue'], [secret.secretArn]);
  fn.addEnvironment('SETTINGS_SECRET_ARN', secret.secretArn);
}

/**
 * Allows `sns:Publish` on the topic. The stack's topics are encrypted with the AWS managed key
 * `alias/aws/sns`, whose key policy already lets the account's principals use it through SNS, so
 * publishing needs no KMS permission.
 */
export function allowPublish(fn: NodejsFunction, topic: ITopic): void {
  allow(fn, ['sns:Publish'], [topic.topicArn]);
}
