/**
 * Each Lambda function of every documented stack variant deploys its own code: no two functions share
 * an asset (`Code.S3Key`), and each asset is the bundle of that function's entry. CDK caches assets per
 * process on their bundling options; an entry that is not among them once gave the escalation check the
 * receiver's zip, which answered Scheduler's event with a successful `404 no route`.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { lazyChunks } from './assembly/chunks.js';
import { CHUNK_CLAIMS } from './assembly/claims.js';
import { bundleMetafile, deployed, handlerModule } from './assembly/deployed.js';
import { VARIANTS, type VariantName } from './assembly/variants.js';

const TEST_DIR = fileURLToPath(new URL('.', import.meta.url));

/** The entry each function's construct path deploys, by what only that entry's bundle contains. */
const ENTRY_MARK: Record<string, string> = {
  'Receiver/Function': 'functions/lambda.ts',
  'Escalation/Function': 'functions/escalation.ts',
};

/** The entry files a bundle was built from, read from its source map (`sources`, relative to the asset). */
function bundledEntries(module: string): string[] {
  const map = JSON.parse(readFileSync(`${module}.map`, 'utf8')) as { sources: string[] };
  return map.sources.filter((s) => /(^|\/)functions\/[^/]+\.ts$/.test(s)).map((s) => s.replace(/^(\.\.\/)+/, ''));
}

describe.each(Object.keys(VARIANTS) as VariantName[])('the %s variant', (variant) => {
  it('gives every Lambda function an asset of its own', () => {
    const { functions } = deployed(variant);
    expect(functions.length).toBeGreaterThan(0);
    const keys = functions.map((f) => f.s3Key);
    expect(new Set(keys).size, functions.map((f) => `${f.path}: ${f.s3Key}`).join('\n')).toBe(keys.length);
  });

  it("deploys each function with its own entry's bundle", () => {
    for (const fn of deployed(variant).functions) {
      expect(Object.keys(ENTRY_MARK), fn.path).toContain(fn.path);
      expect(bundledEntries(handlerModule(fn)), fn.path).toEqual([ENTRY_MARK[fn.path]]);
      expect(readFileSync(join(fn.assetDir, 'index.mjs'), 'utf8')).toMatch(/export\s*\{[^}]*\bhandler\b/);
    }
  });
});

describe('what each asset carries beside the bundle', () => {
  it("the receiver's: the chart renderer's WebAssembly and font beside its chunks", () => {
    for (const variant of Object.keys(VARIANTS) as VariantName[]) {
      const receiver = deployed(variant).functions.find((f) => f.path === 'Receiver/Function')!;
      for (const file of ['index_bg.wasm', 'DejaVuSans.ttf'])
        expect(readFileSync(join(receiver.assetDir, 'chunks', file)).length, `${variant}: ${file}`).toBeGreaterThan(0);
    }
  });

  it("the routing variant's receiver: the routing file as routing.yml, byte for byte (ROUTING_FILE names it)", () => {
    const receiver = deployed('routing').functions.find((f) => f.path === 'Receiver/Function')!;
    expect(readFileSync(join(receiver.assetDir, 'routing.yml'), 'utf8')).toBe(
      readFileSync(VARIANTS.routing.routingFile, 'utf8'),
    );
    expect(receiver.environment.ROUTING_FILE).toBe('/var/task/routing.yml');
  });
});

describe('every lazily loaded chunk of every deployed function', () => {
  const functions = (Object.keys(VARIANTS) as VariantName[]).flatMap((v) => deployed(v).functions);
  const assets = [...new Map(functions.map((f) => [f.assetDir, f])).values()];

  it.each(assets.map((f) => [`${f.variant} ${f.path}`, f] as const))(
    '%s: is claimed by a test that loads and calls it, or said to be unreachable and why',
    (_name, fn) => {
      const claims = CHUNK_CLAIMS[fn.path] ?? {};
      const chunks = lazyChunks(fn.assetDir).map((c) => c.name);
      expect(chunks.length).toBeGreaterThan(0);
      expect(chunks.filter((c) => !(c in claims))).toEqual([]);
      expect(Object.keys(claims).filter((c) => !chunks.includes(c))).toEqual([]);
      for (const [chunk, owner] of Object.entries(claims)) {
        if (owner.startsWith('never: ')) expect(owner.length, chunk).toBeGreaterThan(40);
        else expect(existsSync(join(TEST_DIR, owner)), `${chunk}: ${owner}`).toBe(true);
      }
    },
  );

  it("matches esbuild's metafile of its entry, file by file", () => {
    for (const [entry, path] of [
      ['functions/lambda.ts', 'Receiver/Function'],
      ['functions/escalation.ts', 'Escalation/Function'],
    ] as const) {
      const fn = functions.find((f) => f.path === path)!;
      const outputs = Object.entries(bundleMetafile(entry).outputs).filter(([o]) => o.endsWith('.mjs'));
      for (const [output, { bytes }] of outputs) {
        const file = join(fn.assetDir, output.replace(/^.*?metafile-out\//, ''));
        expect(statSync(file).size, file).toBe(bytes);
      }
    }
  });
});
