/**
 * Classic `zod` stays out of the Lambda bundles: every schema is built with `zod/mini` through
 * `shared/core/zod.ts`. One classic import anywhere brings its 105 KB back into the receiver's cold
 * init (with its slower schema building), and the saving is lost whole, not in part
 * (`npm run bench -- floor`). Checked on the bundles as deployed (the set-up's metafiles of them).
 * @see https://esbuild.github.io/api/#metafile
 */
import type { Metafile } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { bundleMetafile } from './assembly/deployed.js';

/** zod's classic API (`import … from 'zod'`, `zod/v4`, `zod/v3`); `zod/mini` lives in `v4/mini/` and `v4/core/`. */
const CLASSIC = /node_modules\/zod\/(index\.js|v4\/index\.js|v4\/classic\/|v3\/)/;

/** The metafile inputs with bytes in `outputs` (not tree-shaken away). */
function inputsOf(metafile: Metafile, outputs: string[]): string[] {
  return [
    ...new Set(
      outputs.flatMap((o) =>
        Object.entries(metafile.outputs[o]!.inputs).flatMap(([path, i]) => (i.bytesInOutput > 0 ? [path] : [])),
      ),
    ),
  ];
}

/** The output files cold init loads: `index.mjs` and what it imports statically, transitively. */
function initialOutputs(metafile: Metafile): string[] {
  const initial = new Set<string>();
  const visit = (o: string) => {
    if (initial.has(o) || !metafile.outputs[o]) return;
    initial.add(o);
    for (const i of metafile.outputs[o]!.imports) if (i.kind === 'import-statement') visit(i.path);
  };
  visit(Object.keys(metafile.outputs).find((o) => o.endsWith('/index.mjs'))!);
  return [...initial];
}

/** Our modules that import classic zod, to name the culprit when the check fails. */
function classicImporters(metafile: Metafile): string[] {
  return Object.entries(metafile.inputs).flatMap(([path, input]) =>
    !path.includes('node_modules/') && input.imports.some((i) => CLASSIC.test(i.path)) ? [path] : [],
  );
}

describe.each(['functions/lambda.ts', 'functions/escalation.ts'] as const)('%s', (entry) => {
  const metafile = bundleMetafile(entry);

  it('loads zod/mini with its English messages at cold init, and no classic zod', () => {
    const atInit = inputsOf(metafile, initialOutputs(metafile));
    expect(atInit.some((i) => i.includes('node_modules/zod/v4/mini/'))).toBe(true);
    expect(atInit).toContain('node_modules/zod/v4/locales/en.js');
    expect(classicImporters(metafile)).toEqual([]);
    expect(atInit.filter((i) => CLASSIC.test(i))).toEqual([]);
  });

  // The routing file's reader is a lazy chunk, but one that start-up loads whenever ROUTING_FILE is set.
  it('holds no classic zod in any chunk', () => {
    expect(inputsOf(metafile, Object.keys(metafile.outputs)).filter((i) => CLASSIC.test(i))).toEqual([]);
  });
});
