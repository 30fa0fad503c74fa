/**
 * Our defaults for every Lambda of the stack, in one place so the receiver and the escalation check
 * cannot drift: Node 22 on arm64, ESM bundled by the local esbuild (no Docker), source maps, the
 * AWS SDK taken from the runtime, and a log group with a month's retention.
 */
import { fileURLToPath } from 'node:url';
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Architecture, Runtime } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat, type ICommandHooks } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';

export const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

export interface NodeFunctionProps {
  /** Entry file exporting `handler`. */
  entry: string;
  memoryMiB: number;
  timeoutSeconds: number;
  environment: Record<string, string>;
  /** Extra files for the bundle (e.g. the routing file). */
  commandHooks?: ICommandHooks;
}

/** Creates `<id>Logs` (the log group) and `<id>` (the function) in `scope`. */
export function nodeFunction(scope: Construct, id: string, props: NodeFunctionProps): { function: NodejsFunction; logGroup: LogGroup } {
  const logGroup = new LogGroup(scope, `${id === 'Function' ? '' : id}Logs`, {
    retention: RetentionDays.ONE_MONTH,
    // The lines expire within a month anyway; deleting the stack should not leave the group behind.
    removalPolicy: RemovalPolicy.DESTROY,
  });
  const fn = new NodejsFunction(scope, id, {
    entry: props.entry,
    handler: 'handler',
    projectRoot: REPO_ROOT,
    depsLockFilePath: `${REPO_ROOT}package-lock.json`,
    runtime: Runtime.NODEJS_22_X,
    architecture: Architecture.ARM_64,
    memorySize: props.memoryMiB,
    timeout: Duration.seconds(props.timeoutSeconds),
    logGroup,
    environment: { NODE_OPTIONS: '--enable-source-maps', ...props.environment },
    bundling: {
      forceDockerBundling: false,
      // ESM because the entries read the settings secret with top-level await.
      format: OutputFormat.ESM,
      // esbuild's ESM output has no `require`; CommonJS dependencies still call it.
      banner: "import { createRequire as __cjsRequire } from 'node:module'; const require = __cjsRequire(import.meta.url);",
      mainFields: ['module', 'main'],
      target: 'node22',
      minify: true,
      sourceMap: true,
      // The Node 22 runtime ships AWS SDK v3.
      externalModules: ['@aws-sdk/*'],
      ...(props.commandHooks ? { commandHooks: props.commandHooks } : {}),
    },
  });
  return { function: fn, logGroup };
}

/**
 * Grants read/write on the dedupe table's items and sets `TABLE_NAME`, together, so the grant and
 * the setting cannot drift apart between the functions that share the table.
 */
export function wireTable(fn: NodejsFunction, table: ITable): void {
  table.grantReadWriteData(fn);
  fn.addEnvironment('TABLE_NAME', table.tableName);
}

/** Grants read on the settings secret and sets `SETTINGS_SECRET_ARN` (read at cold start). */
export function wireSettingsSecret(fn: NodejsFunction, secret: ISecret): void {
  secret.grantRead(fn);
  fn.addEnvironment('SETTINGS_SECRET_ARN', secret.secretArn);
}
