/**
 * Test helper: synthesizes a CDK app into a scratch directory under the repository's `.tmp/`
 * (git-ignored), so bundled assets can `import` packages from the repository's node_modules.
 *
 * CDK's built-in CloudFormation validation is off here: outside an explicit
 * `@aws-cdk/core:validateAgainstDefaultRules` it only warns, no test reads those warnings, and
 * compiling its WebAssembly costs each test file seconds of CPU. `cdk synth` still runs it.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { App } from 'aws-cdk-lib';

const SCRATCH = fileURLToPath(new URL('../../.tmp/', import.meta.url));

/** A fresh app writing to its own scratch directory; call `dispose()` when done. */
export function scratchApp(context: Record<string, unknown> = {}): { app: App; outdir: string; dispose: () => void } {
  mkdirSync(SCRATCH, { recursive: true });
  const outdir = mkdtempSync(`${SCRATCH}cdk-`);
  return {
    app: new App({ outdir, context, builtinCloudFormationValidation: false }),
    outdir,
    dispose: () => rmSync(outdir, { recursive: true, force: true }),
  };
}
