/**
 * Functions a reader can hold in their head: no product function (shared/, functions/, infra/) over
 * {@link MAX_LINES} lines or with more than {@link MAX_PARAMS} parameters (take a context object instead),
 * read with the TypeScript parser. The functions that still exceed a bound are listed by file and name
 * with their size today: one that grows, or a new one over a bound, fails here; one brought under its
 * bound must leave the list (the list only shrinks).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const MAX_LINES = 40;
const MAX_PARAMS = 4;

/** `file name` → its lines (or parameters) today; to be split (or given a context object), never grown. */
const LONG: Record<string, number> = {
  'infra/stack.ts (function)': 65,
};
const MANY_PARAMS: Record<string, number> = {
  'shared/runtime/ack.ts createAckRuntime': 5,
  'shared/runtime/settings-secret.ts secretTokenSource': 5,
  'infra/alarms.ts watchFunction': 5,
  'infra/alarms.ts watchQueue': 5,
};

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

/** Every function with a body: `file name` → the largest lines and parameters among those of that name. */
function measure(): { lines: Map<string, number>; params: Map<string, number> } {
  const lines = new Map<string, number>();
  const params = new Map<string, number>();
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
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return { lines, params };
}

const measured = measure();

describe.each([
  ['lines', MAX_LINES, measured.lines, LONG],
  ['parameters', MAX_PARAMS, measured.params, MANY_PARAMS],
] as const)('functions by %s', (_, max, sizes, known) => {
  it(`none over ${max} but those listed, and none of those grown`, () => {
    const over = [...sizes].filter(([key, n]) => n > max && n > (known[key] ?? max)).map(([key, n]) => `${key}: ${n}`);
    expect(over).toEqual([]);
  });

  it('the list names only functions still over the bound', () => {
    expect(Object.keys(known).filter((key) => (sizes.get(key) ?? 0) <= max)).toEqual([]);
  });
});
