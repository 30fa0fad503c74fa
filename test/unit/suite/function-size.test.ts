/**
 * Functions a reader can hold in their head: no product function (shared/, functions/, infra/) over
 * {@link MAX_LINES} lines or with more than {@link MAX_PARAMS} parameters (take a context object instead),
 * read with the TypeScript parser. A function stays over a bound only for a reason its docstring gives
 * (a flat declarative table, say, that reads better whole): it is listed by file and name with its size
 * today and that reason, `why`, a phrase its JSDoc must contain. One that grows, or a new one over a
 * bound, fails here; one brought under its bound must leave the list (the lists only shrink).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const MAX_LINES = 40;
const MAX_PARAMS = 4;

/** A function allowed over a bound: its size today (never to grow) and why, a phrase of its docstring. */
interface Exception {
  size: number;
  why: string;
}

/** `file name` → its lines today, and why it reads better whole. */
const LONG: Record<string, Exception> = {};
/** `file name` → its parameters today, and why no context object. */
const MANY_PARAMS: Record<string, Exception> = {};

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? files(join(dir, e.name))
      : e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')
        ? [join(dir, e.name)]
        : [],
  );
}

/** A function's name as the lists give it: its own, its variable's or property's, else `(function)`. */
function nameOf(node: ts.FunctionLikeDeclaration, source: ts.SourceFile): string {
  if (node.name) return node.name.getText(source);
  const parent = node.parent;
  if ((ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) && parent.name)
    return parent.name.getText(source);
  return '(function)';
}

/** The text of a function's JSDoc (that of its variable statement for an arrow function), lines joined. */
function docOf(node: ts.FunctionLikeDeclaration, source: ts.SourceFile): string {
  return ts
    .getJSDocCommentsAndTags(node)
    .map((doc) => doc.getText(source))
    .join(' ')
    .replace(/\s*\n\s*\*?\s*/g, ' ');
}

/**
 * Every function with a body: `file name` → the largest lines and parameters among those of that name,
 * and their docstrings.
 */
function measure(): { lines: Map<string, number>; params: Map<string, number>; docs: Map<string, string> } {
  const lines = new Map<string, number>();
  const params = new Map<string, number>();
  const docs = new Map<string, string>();
  for (const path of ['shared', 'functions', 'infra'].flatMap((d) => files(join(ROOT, d)))) {
    const file = relative(ROOT, path);
    const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node) => {
      if (ts.isFunctionLike(node) && 'body' in node && node.body) {
        const key = `${file} ${nameOf(node, source)}`;
        const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
        const end = source.getLineAndCharacterOfPosition(node.end).line;
        lines.set(key, Math.max(lines.get(key) ?? 0, end - start + 1));
        params.set(key, Math.max(params.get(key) ?? 0, node.parameters.length));
        docs.set(key, `${docs.get(key) ?? ''} ${docOf(node, source)}`);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return { lines, params, docs };
}

const measured = measure();

describe.each([
  ['lines', MAX_LINES, measured.lines, LONG],
  ['parameters', MAX_PARAMS, measured.params, MANY_PARAMS],
] as const)('functions by %s', (_, max, sizes, known) => {
  it(`none over ${max} but those listed, and none of those grown`, () => {
    const over = [...sizes]
      .filter(([key, n]) => n > max && n > (known[key]?.size ?? max))
      .map(([key, n]) => `${key}: ${n}`);
    expect(over).toEqual([]);
  });

  it('the list names only functions still over the bound', () => {
    expect(Object.keys(known).filter((key) => (sizes.get(key) ?? 0) <= max)).toEqual([]);
  });

  it('each listed function says why in its docstring', () => {
    const silent = Object.entries(known)
      .filter(([key, { why }]) => !measured.docs.get(key)?.includes(why))
      .map(([key, { why }]) => `${key}: "${why}"`);
    expect(silent).toEqual([]);
  });
});
