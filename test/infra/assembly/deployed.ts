/**
 * Reads what the infra tier's global set-up synthesized (`setup.ts`): a variant's CloudFormation
 * template, its asset manifest, and for each Lambda function the directory `cdk deploy` zips and
 * uploads to the `Code.S3Key` the template names. Tests run the functions from those directories:
 * the deployed artifact, not a bundle of their own.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Metafile } from 'esbuild';
import { inject } from 'vitest';
import type { VariantName } from './variants.js';

/** A CloudFormation resource as the template holds it. */
export interface CfnResource {
  Type: string;
  Properties?: Record<string, any>;
  Metadata?: Record<string, unknown>;
  [key: string]: unknown;
}

export interface CfnTemplate {
  Resources: Record<string, CfnResource>;
  Outputs?: Record<string, { Value: unknown }>;
  [key: string]: unknown;
}

/** A Lambda function of the template and its deployed code. */
export interface DeployedFunction {
  variant: VariantName;
  logicalId: string;
  /** The construct path below the stack, e.g. `Receiver/Function` (`aws:cdk:path` metadata). */
  path: string;
  /** `Code.S3Key`: what the function runs, as uploaded by `cdk deploy`. */
  s3Key: string;
  /** The asset directory zipped to that key (absolute). */
  assetDir: string;
  /** `Handler`, e.g. `index.handler`: the module file is `<assetDir>/index.mjs`. */
  handler: string;
  /** The plain environment variables, as the template sets them (references left as CloudFormation intrinsics). */
  environment: Record<string, unknown>;
}

export interface DeployedStack {
  variant: VariantName;
  /** The nested cloud assembly directory of the variant's stage. */
  dir: string;
  templateFile: string;
  template: CfnTemplate;
  functions: DeployedFunction[];
}

interface AssetManifest {
  files: Record<
    string,
    { source: { path: string; packaging?: string }; destinations: Record<string, { objectKey: string }> }
  >;
}

interface Manifest {
  artifacts: Record<string, { type: string; properties?: Record<string, any>; displayName?: string }>;
}

const cache = new Map<VariantName, DeployedStack>();

/** The cloud assembly directory of the whole run (every variant's stage, and the shared assets). */
export function assemblyDir(): string {
  return inject('assemblyDir');
}

/**
 * The stack of variant `name` as synthesized.
 * @throws when the set-up did not synthesize it
 */
export function deployed(name: VariantName): DeployedStack {
  const known = cache.get(name);
  if (known) return known;
  const dir = join(assemblyDir(), `assembly-${name}`);
  if (!existsSync(dir)) throw new Error(`variant ${name} was not synthesized (test/infra/assembly/setup.ts)`);
  const manifest = readJson<Manifest>(join(dir, 'manifest.json'));
  const stackArtifact = Object.values(manifest.artifacts).find((a) => a.type === 'aws:cloudformation:stack')!;
  const templateFile = join(dir, stackArtifact.properties!.templateFile);
  const assetsArtifact = Object.values(manifest.artifacts).find((a) => a.type === 'cdk:asset-manifest')!;
  const assets = readJson<AssetManifest>(join(dir, assetsArtifact.properties!.file));
  const byKey = new Map(
    Object.values(assets.files).flatMap((f) =>
      Object.values(f.destinations).map((d) => [d.objectKey, resolve(dir, f.source.path)] as const),
    ),
  );
  const template = readJson<CfnTemplate>(templateFile);
  const functions = Object.entries(template.Resources)
    .filter(([, r]) => r.Type === 'AWS::Lambda::Function')
    .map(([logicalId, r]): DeployedFunction => {
      const s3Key = r.Properties!.Code.S3Key as string;
      const assetDir = byKey.get(s3Key);
      if (!assetDir) throw new Error(`${name}: no asset uploads to ${s3Key} (${logicalId})`);
      return {
        variant: name,
        logicalId,
        path: String(r.Metadata?.['aws:cdk:path'] ?? '')
          .replace(/^[^/]+\/[^/]+\//, '')
          .replace(/\/Resource$/, ''),
        s3Key,
        assetDir,
        handler: r.Properties!.Handler,
        environment: r.Properties!.Environment?.Variables ?? {},
      };
    });
  const stack = { variant: name, dir, templateFile, template, functions };
  cache.set(name, stack);
  return stack;
}

/**
 * esbuild's metafile of a deployed entry (`functions/lambda.ts`), built with the asset's options by the set-up.
 * @see https://esbuild.github.io/api/#metafile
 */
export function bundleMetafile(entry: 'functions/lambda.ts' | 'functions/escalation.ts'): Metafile {
  return readJson<Metafile>(join(assemblyDir(), 'metafiles', `${entry.replace(/^functions\/|\.ts$/g, '')}.json`));
}

/**
 * The function at construct path `path` (below the stack, e.g. `Receiver/Function`) of variant `name`.
 * @throws when the variant has no such function
 */
export function deployedFunction(name: VariantName, path: string): DeployedFunction {
  const fn = deployed(name).functions.find((f) => f.path === path);
  if (!fn) throw new Error(`${name} has no function ${path}`);
  return fn;
}

/** The module file Lambda loads for `fn` (`index.handler` → `<assetDir>/index.mjs`). */
export function handlerModule(fn: DeployedFunction): string {
  return join(fn.assetDir, `${fn.handler.split('.')[0]}.mjs`);
}

function readJson<T>(file: string): T {
  return JSON.parse(readFileSync(file, 'utf8')) as T;
}
