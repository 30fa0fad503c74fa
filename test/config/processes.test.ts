/**
 * The harness's own failure paths and the fast-rules copy: a missing binary fails with the
 * package to install, a Prometheus that cannot start fails with its stderr, and the fast
 * rules differ from the shipped ones only in `for`.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { findBinary, requireBinaries } from '../helpers/binaries.js';
import { makeTempDir, SHIPPED, startPrometheus, writeFastRules } from '../helpers/processes.js';

let dir: string;

beforeAll(async () => {
  dir = await makeTempDir('processes-test');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('binaries', () => {
  it('finds all four, Alertmanager under either of its names', () => {
    const found = requireBinaries();
    expect(found.alertmanager).toMatch(/\/(prometheus-)?alertmanager$/);
    expect(found.promtool).toMatch(/\/promtool$/);
  });

  it('throws, naming the Debian packages, when a binary is missing', () => {
    const empty = join(dir, 'empty-bin');
    expect(() => findBinary('amtool', [empty])).toThrow(
      `amtool not found in ${empty}: install Debian package prometheus-alertmanager (apt-get install prometheus prometheus-alertmanager)`,
    );
    expect(() => findBinary('alertmanager', [empty])).toThrow(/prometheus-alertmanager or alertmanager not found/);
  });

  it('accepts an executable named alertmanager', async () => {
    const bin = join(dir, 'upstream-bin');
    await mkdir(bin, { recursive: true });
    await writeFile(join(bin, 'alertmanager'), '#!/bin/sh\n', { mode: 0o755 });
    await writeFile(join(bin, 'promtool'), 'not executable\n', { mode: 0o644 });
    expect(findBinary('alertmanager', [bin])).toBe(join(bin, 'alertmanager'));
    expect(() => findBinary('promtool', [bin])).toThrow(/install Debian package prometheus /);
  });
});

describe('writeFastRules', () => {
  it('copies the shipped rules unchanged except for `for: 0s`', async () => {
    type Doc = { groups: { name: string; rules: Record<string, unknown>[] }[] };
    const shipped = parse(await readFile(SHIPPED.rules, 'utf8')) as Doc;
    const fast = parse(await readFile(await writeFastRules(dir), 'utf8')) as Doc;
    const withoutFor = (doc: Doc) =>
      doc.groups.map((g) => ({ ...g, rules: g.rules.map(({ for: _for, ...rest }) => rest) }));
    expect(withoutFor(fast)).toEqual(withoutFor(shipped));
    expect(fast.groups.flatMap((g) => g.rules.map((r) => r.for))).toEqual(Array(9).fill('0s'));
    expect(shipped.groups.flatMap((g) => g.rules.map((r) => r.for))).not.toContain('0s');
  });
});

describe('startPrometheus', () => {
  it('fails with Prometheus’s own error when its rules do not load', async () => {
    const broken = join(dir, 'broken-rules.yml');
    await writeFile(broken, 'groups:\n  - name: x\n    rules:\n      - alert: Broken\n        expr: sum(\n');
    await expect(startPrometheus({ scrapeTargets: ['127.0.0.1:9'], rulesFiles: [broken] })).rejects.toThrow(
      /^prometheus: exited \(1\) before ready:[\s\S]*broken-rules\.yml/,
    );
  });
});
