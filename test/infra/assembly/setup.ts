/**
 * Global set-up of the infra tier: synthesizes every documented stack variant ({@link VARIANTS}) once per
 * run, as `cdk synth` does — cdk.json's context and feature flags, the variant's `-c` values,
 * `infra/pipeline.ts`, cdk-nag's packs (a finding fails the run) — into one cloud assembly under the
 * repository's git-ignored `.tmp/`, one stage per variant. The stages share the asset directory, so an
 * asset common to several variants is bundled once. Tests read it through `deployed.ts`, with esbuild's
 * metafile of each deployed entry.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { App, Stage, Validations } from 'aws-cdk-lib';
import { build } from 'esbuild';
import type { TestProject } from 'vitest/node';
import { lambdaBuildOptions } from '../../../infra/node-function.js';
import { nagPacks } from '../../../infra/nag.js';
import { definePipeline } from '../../../infra/pipeline.js';
import { VARIANTS } from './variants.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The cloud assembly directory holding every variant (a stage each, named as in VARIANTS). */
    assemblyDir: string;
  }
}

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/**
 * The context the CDK CLI gives the app: cdk.json's (feature flags, the documented defaults) and the
 * CLI's own defaults (path and asset metadata, version reporting, bundling every stack).
 */
export function cliContext(): Record<string, unknown> {
  return {
    ...JSON.parse(readFileSync(`${ROOT}cdk.json`, 'utf8')).context,
    'aws:cdk:enable-path-metadata': true,
    'aws:cdk:enable-asset-metadata': true,
    'aws:cdk:version-reporting': true,
    'aws:cdk:bundling-stacks': ['**'],
  };
}

/** The entries the stack deploys, whose esbuild metafiles the set-up keeps (`bundleMetafile` in deployed.ts). */
export const DEPLOYED_ENTRIES = ['functions/lambda.ts', 'functions/escalation.ts'] as const;

export default async function setup(project: TestProject): Promise<() => void> {
  mkdirSync(`${ROOT}.tmp`, { recursive: true });
  const outdir = mkdtempSync(`${ROOT}.tmp/assembly-`);
  const app = new App({ outdir, context: cliContext(), builtinCloudFormationValidation: false });
  Validations.of(app).addPlugins(...nagPacks());
  for (const [name, context] of Object.entries(VARIANTS)) {
    const stage = new Stage(app, name);
    for (const [key, value] of Object.entries(context)) stage.node.setContext(key, value);
    definePipeline(stage);
  }
  app.synth();
  // What esbuild reports of each deployed bundle (inputs per output, imports): built once more with the same
  // options, not written; test/infra/assets.test.ts checks its outputs are the asset's files.
  mkdirSync(`${outdir}/metafiles`);
  for (const entry of DEPLOYED_ENTRIES) {
    const { metafile } = await build({
      ...lambdaBuildOptions(entry, `${outdir}/metafile-out`),
      write: false,
      logLevel: 'silent',
    });
    writeFileSync(`${outdir}/metafiles/${basename(entry, '.ts')}.json`, JSON.stringify(metafile));
  }
  project.provide('assemblyDir', outdir);
  return () => rmSync(outdir, { recursive: true, force: true });
}
