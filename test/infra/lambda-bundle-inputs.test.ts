/**
 * Development-only code never reaches a Lambda bundle: each entry the stack deploys is bundled with
 * the construct's own esbuild settings (`LAMBDA_BUNDLING`) and the metafile's inputs are checked
 * against the devDependencies and the local adapter (the embedded dynalite of `npm start`).
 * `npm start`'s entry, which does use them, is the control that the check sees them.
 * @see https://esbuild.github.io/api/#metafile
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { lambdaBuildOptions, REPO_ROOT } from '../../infra/node-function.js';

const DEV_PACKAGES = Object.keys(JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')).devDependencies as Record<string, string>);
const LOCAL_ONLY = ['shared/store/local-dynamodb.ts', 'shared/runtime/local.ts'];

/**
 * The metafile inputs of `entry` bundled as the stack bundles it (paths relative to the repository).
 * @param inOutput only those with bytes in the output (not tree-shaken away)
 */
async function bundleInputs(entry: string, inOutput = false): Promise<string[]> {
  const { metafile } = await build({ ...lambdaBuildOptions(entry, join(REPO_ROOT, '.tmp/bundle-inputs')), write: false, logLevel: 'silent' });
  if (!inOutput) return Object.keys(metafile.inputs);
  return Object.values(metafile.outputs).flatMap((o) => Object.entries(o.inputs).flatMap(([path, i]) => (i.bytesInOutput > 0 ? [path] : [])));
}

/** The devDependencies and development-only modules among `inputs`. */
function devOnly(inputs: string[]): string[] {
  return inputs.filter((input) => LOCAL_ONLY.includes(input) || DEV_PACKAGES.some((p) => input.includes(`node_modules/${p}/`)));
}

describe('Lambda bundles', () => {
  it.each(['functions/lambda.ts', 'functions/escalation.ts'])('%s holds no development-only code', async (entry) => {
    const inputs = await bundleInputs(entry);
    expect(inputs).toContain('shared/store/alert-record-dynamodb.ts');
    expect(inputs.some((i) => i.includes('node_modules/zod/'))).toBe(true);
    expect(devOnly(inputs)).toEqual([]);
  }, 60_000);

  // `import { z } from 'zod'` pulls in every one of zod's ~50 locales (350 KB); `import * as z` only English.
  it.each(['functions/lambda.ts', 'functions/escalation.ts'])('%s carries no zod locale but English', async (entry) => {
    const locales = (await bundleInputs(entry, true)).filter((i) => /node_modules\/zod\/.*\/locales\//.test(i));
    expect(locales.filter((i) => !i.endsWith('/en.js'))).toEqual([]);
  }, 60_000);

  // The chart renderer (fonts, wasm) and the routing reader go behind `await import()` the same way: their chunks load on first use.
  it('functions/lambda.ts: what only `await import()` reaches stays out of what cold init loads', async () => {
    const { metafile } = await build({ ...lambdaBuildOptions('functions/lambda.ts', join(REPO_ROOT, '.tmp/bundle-inputs')), write: false, logLevel: 'silent' });
    const outputs = metafile.outputs;
    const initial = new Set<string>();
    const visit = (o: string) => {
      if (initial.has(o) || !outputs[o]) return;
      initial.add(o);
      for (const i of outputs[o].imports) if (i.kind === 'import-statement') visit(i.path);
    };
    visit(Object.keys(outputs).find((o) => o.endsWith('/index.mjs'))!);
    const loadedAtInit = (pkg: string) => [...initial].some((o) => Object.keys(outputs[o]!.inputs).some((i) => i.includes(`node_modules/${pkg}/`)));
    // The SDK's STS/SSO clients (credential providers Lambda never uses: it has credentials in the environment).
    expect(loadedAtInit('@aws-sdk/nested-clients')).toBe(false);
    expect(Object.values(outputs).some((o) => Object.keys(o.inputs).some((i) => i.includes('node_modules/@aws-sdk/nested-clients/')))).toBe(true);
    expect(loadedAtInit('@aws-sdk/client-dynamodb')).toBe(true);
    // The routing file's reader (YAML parser, RE2 engine): loaded at start-up only when ROUTING_FILE is set.
    const inChunks = (pkg: string) => Object.values(outputs).some((o) => Object.keys(o.inputs).some((i) => i.includes(`node_modules/${pkg}/`)));
    for (const pkg of ['yaml', 're2js', 'echarts', '@resvg/resvg-wasm']) {
      expect(loadedAtInit(pkg), pkg).toBe(false);
      expect(inChunks(pkg), pkg).toBe(true);
    }
  }, 60_000);

  it("sees development-only code where it is: npm start's entry", async () => {
    const inputs = await bundleInputs('functions/server.ts');
    expect(devOnly(inputs)).toEqual(expect.arrayContaining(['shared/store/local-dynamodb.ts', 'shared/runtime/local.ts']));
    expect(devOnly(inputs).some((i) => i.includes('node_modules/dynalite/'))).toBe(true);
  }, 60_000);
});
