import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { Asset } from 'aws-cdk-lib/aws-s3-assets';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AlertReceiver } from '../../infra/receiver.js';
import { scratchApp } from './synth.js';

const PROBE = fileURLToPath(new URL('./fixtures/entry.ts', import.meta.url));

// Bundles the probe entry with the construct's real settings (local esbuild), then loads the
// bundle in a plain Node process the way Lambda would: as an ES module exporting `handler`.
// (Not with `import()` here: the test runner's module loader supplies a `require` that Lambda lacks.)
async function invokeBundle(file: string): Promise<unknown> {
  const script = `const { handler } = await import(${JSON.stringify(pathToFileURL(file).href)}); process.stdout.write(JSON.stringify(await handler()));`;
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
    timeout: 10_000,
  });
  return JSON.parse(stdout);
}

describe('AlertReceiver bundling', () => {
  const scratch = scratchApp();
  let bundleDir: string;
  let template: Template;

  beforeAll(() => {
    const stack = new Stack(scratch.app, 'Probe');
    const receiver = new AlertReceiver(stack, 'Receiver', { entry: PROBE });
    const asset = receiver.function.node.findChild('Code') as Asset;
    bundleDir = `${scratch.outdir}/${asset.assetPath}`;
    template = Template.fromStack(stack);
  });
  afterAll(() => scratch.dispose());

  it('emits index.mjs with a source map and points the handler at it', () => {
    expect(existsSync(`${bundleDir}/index.mjs`)).toBe(true);
    expect(existsSync(`${bundleDir}/index.mjs.map`)).toBe(true);
    template.hasResourceProperties('AWS::Lambda::Function', { Handler: 'index.handler' });
  });

  it("bundles @aws-sdk/* (the tested version, a shorter cold init) instead of importing the runtime's", () => {
    const code = readFileSync(`${bundleDir}/index.mjs`, 'utf8');
    // Only the SDK's own optional `require`s (the CRT signer for SigV4a, in a try) may remain.
    expect(code).not.toMatch(/(from\s*|import\(\s*)["']@aws-sdk\//);
    expect(code).toContain('defaultSigningName:"sns"');
  });

  it('runs top-level await and a CommonJS require inside the ESM bundle', async () => {
    await expect(invokeBundle(`${bundleDir}/index.mjs`)).resolves.toEqual({
      loadedAtColdStart: 'top-level await ran',
      endOfLine: '\n',
      snsClient: 'function',
    });
  });

  // `--enable-source-maps` parsed the whole map at every cold start (+200 ms of CPU, bench/floor.ts); mapped when formatted instead.
  it('loads no source map at cold start, and a stack trace still points at the TypeScript source that threw', async () => {
    const fn = Object.values(template.findResources('AWS::Lambda::Function'))[0]!;
    expect(fn.Properties.Environment?.Variables?.NODE_OPTIONS).toBeUndefined();
    const script = `const { failingHandler } = await import(${JSON.stringify(pathToFileURL(`${bundleDir}/index.mjs`).href)}); try { failingHandler(); } catch (e) { process.stdout.write(e.stack); }`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
      timeout: 10_000,
    });
    const [head, first, second] = stdout.split('\n');
    expect(head).toBe('Error: probe failure');
    const line =
      readFileSync(PROBE, 'utf8')
        .split('\n')
        .findIndex((l) => l.includes("throw new Error('probe failure')")) + 1;
    expect(first).toMatch(new RegExp(`^    at \\S*claim \\(test/infra/fixtures/entry\\.ts:${line}:\\d+\\)$`));
    expect(second).toMatch(/^ {4}at \S+ \(test\/infra\/fixtures\/entry\.ts:\d+:\d+\)$/);
  });
});
