/**
 * Reading the repository's Markdown the way the docs tests need it: the README and every `docs/*.md`
 * (found by listing the folder, so a new reference file is checked without being named here), the
 * tables in them by their first header cell, and the inline code spans outside fenced blocks.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** The repository's root (tests run from it). */
export const ROOT = resolve('.');

export interface Doc {
  /** Path relative to the root, e.g. `docs/settings.md`. */
  path: string;
  text: string;
}

/** `README.md` and every Markdown file of `docs/`. */
export function readDocs(): Doc[] {
  const docs = readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', ...docs].map((path) => ({ path, text: readFileSync(join(ROOT, path), 'utf8') }));
}

/** The text without its fenced code blocks (each line kept empty, so line numbers stay). */
export function withoutFences(text: string): string {
  let inside = false;
  return text
    .split('\n')
    .map((line) => {
      if (/^\s*(```|~~~)/.test(line)) {
        inside = !inside;
        return '';
      }
      return inside ? '' : line;
    })
    .join('\n');
}

/** One row of a table: its cells, trimmed, and the 1-based line it is on. */
export interface Row {
  cells: string[];
  line: number;
}

/**
 * The body rows of every table (outside fenced blocks) whose first header cell is `header`
 * (case-sensitive), e.g. `Setting`.
 */
export function tableRows(text: string, header: string): Row[] {
  const lines = withoutFences(text).split('\n');
  const rows: Row[] = [];
  for (let i = 0; i + 1 < lines.length; i++) {
    if (!isRow(lines[i]!) || !/^\s*\|[\s:|-]+\|\s*$/.test(lines[i + 1]!)) continue;
    if (cells(lines[i]!)[0] !== header) continue;
    for (let j = i + 2; j < lines.length && isRow(lines[j]!); j++) rows.push({ cells: cells(lines[j]!), line: j + 1 });
  }
  return rows;
}

const isRow = (line: string) => /^\s*\|.*\|\s*$/.test(line);
/** A row's cells; `\|` inside a cell (as in a code span) does not split it. */
const cells = (line: string) =>
  line
    .trim()
    .slice(1, -1)
    .split(/(?<!\\)\|/)
    .map((c) => c.trim());

/** The contents of the inline code spans (`` `…` ``) outside fenced blocks, with their 1-based lines. */
export function inlineCode(text: string): { code: string; line: number }[] {
  const spans: { code: string; line: number }[] = [];
  withoutFences(text)
    .split('\n')
    .forEach((line, i) => {
      for (const m of line.matchAll(/`([^`]+)`/g)) spans.push({ code: m[1]!, line: i + 1 });
    });
  return spans;
}

/** The contents of the code spans of a cell. */
export const codeSpans = (cell: string): string[] => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
