/**
 * Our defaults for every Lambda of the stack, in one place so the receiver and the escalation check
 * cannot drift: the newest Node.js runtime this CDK version offers, on arm64, ESM bundled by the
 * local esbuild (no Docker) with code splitting (see {@link lambdaBuildOptions}), source maps, the AWS
 * SDK bundled, a log group with a month's retention, and a role of its own that may only write to
 * that log group until a helper here grants exactly what the code sends (see test/infra/iam.test.ts).
 */
import { execSync } from 'node:child_process';
import { relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AssetHashType, AssetStaging, DockerImage, Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Code, Function as LambdaFunction, Runtime } from 'aws-cdk-lib/aws-lambda';
import type { ICommandHooks } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import type { PrivateNetwork } from './vpc.js';
import { buildSync, type BuildOptions } from 'esbuild';

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
export const TABLE_ACTIONS = [
  'dynamodb:GetItem',
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:BatchGetItem',
  'dynamodb:BatchWriteItem',
];

/** The esbuild settings of every Lambda bundle besides its ESM format; test/infra/lambda-bundle-inputs.test.ts bundles with them. */
export const LAMBDA_BUNDLING = {
  // esbuild's ESM output has no `require`; CommonJS dependencies still call it (only as a function, for
  // Node's built-ins: everything else is bundled). Made on first call: the banner is in every file of the
  // split bundle, and an eager `createRequire` cost ~0.25 ms of CPU per file at cold init (Node 20 and 24,
  // 40 files: 163 vs 156 ms; 133 vs 126 ms), for the 2 of ~55 files that call it.
  banner:
    "import { createRequire as __cjsRequire } from 'node:module'; let __cjs; const require = (id) => (__cjs ??= __cjsRequire(import.meta.url))(id);",
  mainFields: ['module', 'main'],
  target: `node${LAMBDA_NODE_MAJOR}`,
  minify: true,
  // Written beside each file (`index.mjs.map`) and read only when a stack trace is formatted
  // (`shared/runtime/stack-traces.ts`). `--enable-source-maps` parsed the 1.6 MB map at every cold
  // start instead: +200 ms of CPU on a ~360 ms init (Node 20, bench machine). Keeping names instead
  // of mapping cost 40% more bytes and still pointed at the bundle.
  sourceMap: true,
  // The AWS SDK is bundled, not taken from the runtime: the version the tests ran is the one
  // deployed, and cold init is shorter (one minified file instead of hundreds of CommonJS modules
  // to resolve: 774 → 521 ms on the loaded 2-core bench machine, `npm run bench -- floor`).
  externalModules: [] as string[],
};

/** Where the chunks go in the asset, beside `index.mjs`. */
export const CHUNK_DIR = 'chunks';

/**
 * The whole esbuild configuration of a Lambda bundle: `index.mjs` (exporting `handler`) plus chunks.
 * Code splitting (ESM only) puts what is reached only through `await import()` in chunk files of its
 * own, loaded on first use and not at cold init: the AWS SDK's own credential providers other than
 * the environment's, and ours that a request may never need (the chart renderer, the routing file's
 * reader when no routing file is set) or that a webhook never needs (the acknowledgement page, Slack
 * interactions and chart routes, `shared/http/lazy-routes.ts`; the heartbeat and escalation checks; the
 * SNS event schema; PagerDuty's sender when not configured). test/infra/lambda-cold-init.test.ts checks it. NodejsFunction cannot split (it passes esbuild `--outfile`),
 * hence the construct's own local bundling below.
 * @param entry the entry file, absolute or relative to the repository
 * @param outdir where `index.mjs`, its chunks and their source maps go
 * @see https://esbuild.github.io/api/#splitting
 */
export function lambdaBuildOptions(entry: string, outdir: string): BuildOptions & { metafile: true } {
  return {
    absWorkingDir: REPO_ROOT,
    entryPoints: { index: entry },
    outdir,
    outExtension: { '.js': '.mjs' },
    chunkNames: `${CHUNK_DIR}/[name]-[hash]`,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: LAMBDA_BUNDLING.target,
    mainFields: LAMBDA_BUNDLING.mainFields,
    banner: { js: LAMBDA_BUNDLING.banner },
    minify: LAMBDA_BUNDLING.minify,
    sourcemap: LAMBDA_BUNDLING.sourceMap,
    external: LAMBDA_BUNDLING.externalModules,
    metafile: true,
    logLevel: 'warning',
  };
}

/**
 * The function's code: bundled on this machine by {@link lambdaBuildOptions}, then `afterBundling`'s
 * commands run in the output (e.g. copying the routing file next to `index.mjs`). The asset's hash is
 * that of the output, as NodejsFunction's is. Docker is never used (the image is only the required fallback).
 *
 * CDK stages an asset once per process for equal bundling options (`AssetStaging`'s cache, keyed on
 * their JSON, where `local` counts for nothing), so what tells two bundles apart must be among them:
 * the entry and the commands, as the environment a container build would get. Without it a second
 * function of the stack got the first one's asset (the escalation check deployed the receiver's code).
 */
function bundledCode(entry: string, hooks?: ICommandHooks): Code {
  return Code.fromAsset(REPO_ROOT, {
    assetHashType: AssetHashType.OUTPUT,
    bundling: {
      image: DockerImage.fromRegistry('public.ecr.aws/sam/build-nodejs22.x'),
      environment: {
        LAMBDA_ENTRY: relative(REPO_ROOT, resolve(REPO_ROOT, entry)),
        AFTER_BUNDLING: JSON.stringify(
          hooks?.afterBundling(AssetStaging.BUNDLING_INPUT_DIR, AssetStaging.BUNDLING_OUTPUT_DIR) ?? [],
        ),
      },
      local: {
        tryBundle(outputDir: string): boolean {
          buildSync(lambdaBuildOptions(entry, outputDir));
          for (const command of hooks?.afterBundling(REPO_ROOT, outputDir) ?? [])
            execSync(command, { cwd: REPO_ROOT, stdio: 'inherit' });
          return true;
        },
      },
    },
  });
}

export interface NodeFunctionProps {
  /** Entry file exporting `handler`. */
  entry: string;
  memoryMiB: number;
  timeoutSeconds: number;
  environment: Record<string, string>;
  /** Extra files for the bundle (e.g. the routing file): only `afterBundling` runs, in the output directory. */
  commandHooks?: ICommandHooks;
  /** The VPC the function joins (context `vpcId`, `vpc.ts`); unset: Lambda's own network. */
  network?: PrivateNetwork;
}

/** Creates `<id>Logs` (the log group), `<id>Role` and `<id>` (the function) in `scope`; `Function` drops the prefix. */
export function nodeFunction(
  scope: Construct,
  id: string,
  props: NodeFunctionProps,
): { function: LambdaFunction; logGroup: LogGroup } {
  const prefix = id === 'Function' ? '' : id;
  const logGroup = new LogGroup(scope, `${prefix}Logs`, {
    retention: RetentionDays.ONE_MONTH,
    // The lines expire within a month anyway; deleting the stack should not leave the group behind.
    removalPolicy: RemovalPolicy.DESTROY,
  });
  // Not AWSLambdaBasicExecutionRole: that one may create and write every log group of the account.
  const role = new Role(scope, `${prefix}Role`, { assumedBy: new ServicePrincipal('lambda.amazonaws.com') });
  role.addToPrincipalPolicy(
    new PolicyStatement({ actions: ['logs:CreateLogStream', 'logs:PutLogEvents'], resources: [logGroup.logGroupArn] }),
  );
  const fn = new LambdaFunction(scope, id, {
    code: bundledCode(props.entry, props.commandHooks),
    handler: 'index.handler',
    runtime: LAMBDA_RUNTIME,
    architecture: Architecture.ARM_64,
    memorySize: props.memoryMiB,
    timeout: Duration.seconds(props.timeoutSeconds),
    logGroup,
    role,
    // No NODE_OPTIONS: `--enable-source-maps` would parse every source map at cold init (see LAMBDA_BUNDLING).
    environment: props.environment,
    ...props.network?.functionProps,
  });
  props.network?.allowInterfaces(fn);
  Validations.of(fn).acknowledge({
    id: 'Serverless-LambdaTracing',
    reason:
      'X-Ray active tracing needs xray:PutTraceSegments and PutTelemetryRecords on Resource "*" (no resource-level permissions) while no code sends a segment; every log line carries the awsRequestId and the ops dashboard covers errors and duration.',
  });
  return { function: fn, logGroup };
}

/** Adds one `Allow` statement to the function's role. */
export function allow(
  fn: LambdaFunction,
  actions: string[],
  resources: string[],
  conditions?: Record<string, Record<string, unknown>>,
): void {
  fn.addToRolePolicy(new PolicyStatement({ actions, resources, conditions }));
}

/**
 * Allows {@link TABLE_ACTIONS} on the dedupe table and sets `TABLE_NAME`, together, so the grant
 * and the setting cannot drift apart between the functions that share the table.
 */
export function wireTable(fn: LambdaFunction, table: ITable): void {
  allow(fn, TABLE_ACTIONS, [table.tableArn]);
  fn.addEnvironment('TABLE_NAME', table.tableName);
}

/** Allows `secretsmanager:GetSecretValue` (all the code sends) on the settings secret and sets `SETTINGS_SECRET_ARN` (read at cold start). */
export function wireSettingsSecret(fn: LambdaFunction, secret: ISecret): void {
  allow(fn, ['secretsmanager:GetSecretValue'], [secret.secretArn]);
  fn.addEnvironment('SETTINGS_SECRET_ARN', secret.secretArn);
}

/**
 * Allows `sns:Publish` on the topic. The stack's topics are encrypted with the AWS managed key
 * `alias/aws/sns`, whose key policy already lets the account's principals use it through SNS, so
 * publishing needs no KMS permission.
 */
export function allowPublish(fn: LambdaFunction, topic: ITopic): void {
  allow(fn, ['sns:Publish'], [topic.topicArn]);
}
