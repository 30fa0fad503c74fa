/**
 * Development-only code never reaches a Lambda bundle: each entry the stack deploys is bundled with
 * the construct's own esbuild settings (`LAMBDA_BUNDLING`) and the metafile's inputs are checked
 * against the devDependencies and `npm start`'s own packages and local adapter (the embedded dynalite).
 * `npm start`'s entry, which does use them, is the control that the check sees them.
 * @see https://esbuild.github.io/api/#metafile
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { build, type Metafile } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { lambdaBuildOptions, REPO_ROOT } from '../../infra/node-function.js';
import { bundleMetafile } from './assembly/deployed.js';

/**
 * The devDependencies, and the dependencies only `npm start` needs: its build step (esbuild) and its
 * embedded store (dynalite, and the LevelDB binding that holds `DATA_DIR`'s lock).
 */
const DEV_PACKAGES = [
  ...Object.keys(
    JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')).devDependencies as Record<string, string>,
  ),
  'esbuild',
  'dynalite',
  'classic-level',
];
const LOCAL_ONLY = ['shared/store/local-dynamodb.ts', 'shared/runtime/local.ts', 'shared/runtime/data-dir.ts'];

const metafiles = new Map<string, Promise<Metafile>>();

/** The metafile of `entry` bundled as the stack bundles it (paths relative to the repository); one build per entry. */
function metafileOf(entry: string): Promise<Metafile> {
  if (entry === 'functions/lambda.ts' || entry === 'functions/escalation.ts')
    return Promise.resolve(bundleMetafile(entry));
  let known = metafiles.get(entry);
  if (!known) {
    known = build({
      ...lambdaBuildOptions(entry, join(REPO_ROOT, '.tmp/bundle-inputs')),
      write: false,
      logLevel: 'silent',
    }).then((r) => r.metafile);
    metafiles.set(entry, known);
  }
  return known;
}

/**
 * The metafile inputs of `entry` bundled as the stack bundles it (paths relative to the repository).
 * @param inOutput only those with bytes in the output (not tree-shaken away)
 */
async function bundleInputs(entry: string, inOutput = false): Promise<string[]> {
  const metafile = await metafileOf(entry);
  if (!inOutput) return Object.keys(metafile.inputs);
  return Object.values(metafile.outputs).flatMap((o) =>
    Object.entries(o.inputs).flatMap(([path, i]) => (i.bytesInOutput > 0 ? [path] : [])),
  );
}

/** The devDependencies and development-only modules among `inputs`. */
function devOnly(inputs: string[]): string[] {
  return inputs.filter(
    (input) => LOCAL_ONLY.includes(input) || DEV_PACKAGES.some((p) => input.includes(`node_modules/${p}/`)),
  );
}

describe('Lambda bundles', () => {
  it.each(['functions/lambda.ts', 'functions/escalation.ts'])(
    '%s holds no development-only code',
    async (entry) => {
      const inputs = await bundleInputs(entry);
      expect(inputs).toContain('shared/store/alert-record-dynamodb.ts');
      expect(inputs.some((i) => i.includes('node_modules/zod/'))).toBe(true);
      expect(devOnly(inputs)).toEqual([]);
    },
    60_000,
  );

  // `import { z } from 'zod'` pulls in every one of zod's ~50 locales (350 KB); `import * as z` only English.
  it.each(['functions/lambda.ts', 'functions/escalation.ts'])(
    '%s carries no zod locale but English',
    async (entry) => {
      const locales = (await bundleInputs(entry, true)).filter((i) => /node_modules\/zod\/.*\/locales\//.test(i));
      expect(locales.filter((i) => !i.endsWith('/en.js'))).toEqual([]);
    },
    60_000,
  );

  // esbuild makes the target of `await import()` a chunk of its own; a CommonJS module there becomes a chunk
  // exporting only `default`, so the named export the code reads (`WebClient`) is undefined in Lambda while
  // `npm start` (Node's own interop) works. Such a package is reached through a module of ours that names
  // what it takes (e.g. shared/channels/slack/web-api-client.ts).
  it.each(['functions/lambda.ts', 'functions/escalation.ts'])(
    '%s: every `await import()` lands on an ES module, never on CommonJS',
    async (entry) => {
      const metafile = await metafileOf(entry);
      const dynamic = Object.entries(metafile.inputs).flatMap(([from, input]) =>
        input.imports
          .filter((i) => i.kind === 'dynamic-import' && !i.external && metafile.inputs[i.path])
          .map((i) => ({ from, to: i.path, format: metafile.inputs[i.path]!.format })),
      );
      expect(dynamic.some((d) => d.from.startsWith('shared/'))).toBe(true);
      expect(dynamic.filter((d) => d.format !== 'esm')).toEqual([]);
    },
    60_000,
  );

  // The chart renderer (fonts, wasm) and the routing reader go behind `await import()` the same way: their chunks load on first use.
  it('functions/lambda.ts: what only `await import()` reaches stays out of what cold init loads', async () => {
    const metafile = await metafileOf('functions/lambda.ts');
    const outputs = metafile.outputs;
    const initial = new Set<string>();
    const visit = (o: string) => {
      if (initial.has(o) || !outputs[o]) return;
      initial.add(o);
      for (const i of outputs[o].imports) if (i.kind === 'import-statement') visit(i.path);
    };
    visit(Object.keys(outputs).find((o) => o.endsWith('/index.mjs'))!);
    const loadedAtInit = (pkg: string) =>
      [...initial].some((o) => Object.keys(outputs[o]!.inputs).some((i) => i.includes(`node_modules/${pkg}/`)));
    // The SDK's STS/SSO clients (credential providers Lambda never uses: it has credentials in the environment).
    expect(loadedAtInit('@aws-sdk/nested-clients')).toBe(false);
    expect(
      Object.values(outputs).some((o) =>
        Object.keys(o.inputs).some((i) => i.includes('node_modules/@aws-sdk/nested-clients/')),
      ),
    ).toBe(true);
    expect(loadedAtInit('@aws-sdk/client-dynamodb')).toBe(true);
    // The routing file's reader (YAML parser, RE2 engine): loaded at start-up only when ROUTING_FILE is set.
    const inChunks = (pkg: string) =>
      Object.values(outputs).some((o) => Object.keys(o.inputs).some((i) => i.includes(`node_modules/${pkg}/`)));
    for (const pkg of ['yaml', 're2js', 'echarts', '@resvg/resvg-wasm']) {
      expect(loadedAtInit(pkg), pkg).toBe(false);
      expect(inChunks(pkg), pkg).toBe(true);
    }
  }, 60_000);

  it("sees development-only code where it is: npm start's entry", async () => {
    const inputs = await bundleInputs('functions/server.ts');
    expect(devOnly(inputs)).toEqual(
      expect.arrayContaining(['shared/store/local-dynamodb.ts', 'shared/runtime/local.ts']),
    );
    expect(devOnly(inputs).some((i) => i.includes('node_modules/dynalite/'))).toBe(true);
    expect(devOnly(inputs)).toContain('shared/runtime/data-dir.ts');
  }, 60_000);
});
