/**
 * The product speaks of the product: code, comments, docs, tests and bench output never carry how
 * the work was done (numbered sessions or rounds, issue numbers, commit-stamped runs, who did what) or
 * paths of the machine something ran on; history lives in git. And every repository path a file names
 * (`shared/…`, `docs/…`, `../infra/…` from docs/) exists, and every Markdown link of the README and
 * docs/ resolves, anchors included.
 *
 * Every tracked kind of text file under the repository's own folders is read (node_modules, build
 * output and git's own folder aside), so a new file is checked without being named here.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, readDocs, withoutFences } from '../../helpers/docs.js';

/** Folders and top-level files that hold the repository's text. */
const ROOTS = ['README.md', 'docs', 'shared', 'functions', 'infra', 'bench', 'scripts', 'test', '.ci'];
const TOP_LEVEL = /^(?!package-lock\.json$)[^.].*\.(json|ts|md)$|^\.dependency-cruiser\.cjs$/;
const TEXT = /\.(ts|mts|cts|mjs|cjs|js|json|md|yml|yaml|prom|txt|sh|html)$|^run$/;
const SKIP_DIRS = new Set(['node_modules', '.tmp', 'cdk.out', '.git']);
/** This file names the markers it looks for. */
const SELF = 'test/unit/docs/product-speaks.test.ts';

function walk(path: string): string[] {
  const stat = statSync(join(ROOT, path));
  if (!stat.isDirectory()) return TEXT.test(path.split('/').pop()!) && stat.size < 2_000_000 ? [path] : [];
  return readdirSync(join(ROOT, path))
    .filter((name) => !SKIP_DIRS.has(name))
    .flatMap((name) => walk(`${path}/${name}`));
}

const files = [...ROOTS.flatMap(walk), ...readdirSync(ROOT).filter((n) => TOP_LEVEL.test(n))].filter((f) => f !== SELF);
const texts = files.map((path) => ({ path, text: readFileSync(join(ROOT, path), 'utf8') }));

/** Development history and machine paths, each with what it looks like. */
const MARKERS: [name: string, pattern: RegExp][] = [
  ['a numbered session', /\bsessions? \d+|\bsession by session\b/i],
  ['a numbered round of work', /\bround \d+\b/i],
  ['an issue number', /\bissue #?\d+|\(#\d+[),]/i],
  ['a commit-stamped run', /\bcommit [0-9a-f]{7,40}\b/i],
  ['who did the work', /\bthe team\b|\bteam kit\b|\bthis project's rules\b/i],
  ['how the work was reviewed', /\bfresh[- ]user walk\b|\bbreak-it\b/i],
  ['a path of the machine it ran on', /\/work\/|file:\/\/\/(home|Users|root|tmp|work)\//],
];

/** A line citing another project's issue or pull request by its URL: not our history. */
const UPSTREAM = /github\.com\/[\w.-]+\/[\w.-]+\/(issues|pull)\/\d+/;

/** Where text names a marker: `path:line: marker: the line`. */
function markersIn({ path, text }: { path: string; text: string }): string[] {
  const found: string[] = [];
  text.split('\n').forEach((line, i) => {
    for (const [name, pattern] of MARKERS)
      if (pattern.test(line) && !(name === 'an issue number' && UPSTREAM.test(line)))
        found.push(`${path}:${i + 1}: ${name}: ${line.trim().slice(0, 160)}`);
  });
  return found;
}

/**
 * Repository paths a text names: a top-level folder of ours followed by a path (`shared/store/keys.ts`),
 * in Markdown also reached with `../` from docs/ (in code, a relative path is an import, which the
 * compiler checks). Not a path inside a URL, another path or a value (`=bench/…`), and not a pattern:
 * one followed by `*`, `<`, `{`, `$` or `…` is a glob or a template.
 */
const PATH =
  /(?<![\w./@=-])((?:\.\.\/)*)((?:shared|functions|infra|bench|scripts|test|docs|\.ci)\/[A-Za-z0-9_.\-/]*[A-Za-z0-9_])(?![*<{$…\w-]|\/[*<{$…])/g;

/** Whether `named` exists as written, as the `.ts` source of a `.js` import, or without its extension. */
function exists(named: string): boolean {
  for (const candidate of [named, named.replace(/\.js$/, '.ts'), `${named}.ts`])
    try {
      statSync(join(ROOT, candidate));
      return true;
    } catch {}
  return false;
}

/** Paths the docs name as examples of the user's own files, not ours. */
const USERS_FILES = new Set(['infra/routing.yml']);

/** Paths `path`'s text names that do not exist, as `path:line: name`. */
function missingPaths({ path, text }: { path: string; text: string }): string[] {
  const missing: string[] = [];
  text.split('\n').forEach((line, i) => {
    for (const m of line.matchAll(PATH)) {
      if (m[1] && !path.endsWith('.md')) continue;
      const named = normalize(join(m[1] ? dirname(path) : '.', m[1]!, m[2]!));
      if (!USERS_FILES.has(named) && !exists(named)) missing.push(`${path}:${i + 1}: ${m[0]}`);
    }
  });
  return missing;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as `-`. */
const anchor = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, '')
    .replace(/ /g, '-');

describe('the product speaks of the product', () => {
  it('reads the repository (a sanity check of what the next tests see)', () => {
    expect(files).toEqual(expect.arrayContaining(['README.md', 'docs/settings.md', 'shared/runtime/config.ts']));
    expect(files.length).toBeGreaterThan(300);
  });

  it('no file carries development history or a machine path', () => {
    expect(texts.flatMap(markersIn)).toEqual([]);
  });

  it('every repository path a file names exists', () => {
    expect(texts.flatMap(missingPaths)).toEqual([]);
  });

  it('every Markdown link of the README and docs/ resolves, anchors included', () => {
    const docs = readDocs();
    const anchors = new Map(
      docs.map((d) => [d.path, new Set([...withoutFences(d.text).matchAll(/^#+ (.*)$/gm)].map((m) => anchor(m[1]!)))]),
    );
    const broken: string[] = [];
    for (const doc of docs) {
      // Links outside code: a `[text](url)` inside a code span is an example, not a link.
      const prose = withoutFences(doc.text).replace(/`[^`]*`/g, '');
      for (const [, target] of prose.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z][a-z+.-]*:/.test(target!)) continue;
        const [file, hash] = target!.split('#') as [string, string | undefined];
        const named = file ? normalize(join(dirname(doc.path), file)) : doc.path;
        try {
          statSync(join(ROOT, named));
        } catch {
          broken.push(`${doc.path}: ${target} (no such file)`);
          continue;
        }
        if (hash && named.endsWith('.md') && !anchors.get(named)?.has(hash))
          broken.push(`${doc.path}: ${target} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });
});

describe('the checks themselves', () => {
  it('find each kind of marker', () => {
    const text = [
      // The markers are assembled from parts so that this file does not itself read as process talk.
      ['measured in', 'session', '19'].join(' '),
      ['see', 'issue', '#10'].join(' '),
      'the run at commit 02ddf48',
      "the team's defaults",
      ['found by the', 'fresh-user', 'walk'].join(' '),
      ['at ', 'work', 'bench20', '.tmp', 'start'].join('/'),
      'a fine line about a session cookie',
      ['Alertmanager', 'issue', '#226 (https://github.com/prometheus/alertmanager/issues/226)'].join(' '),
    ].join('\n');
    expect(markersIn({ path: 'x', text }).map((m) => m.split(': ')[1])).toEqual([
      'a numbered session',
      'an issue number',
      'a commit-stamped run',
      'who did the work',
      'how the work was reviewed',
      'a path of the machine it ran on',
    ]);
  });

  it('find missing paths, not patterns, URLs or the paths that exist', () => {
    const text = [
      'see shared/store/keys.ts and shared/store/no-such-file.ts.',
      'in `shared/channels/<name>/` and shared/store/dynalite-*.ts',
      'https://prometheus.io/docs/alerting/latest/ and ../infra/app.ts',
    ].join('\n');
    expect(missingPaths({ path: 'docs/x.md', text })).toEqual(['docs/x.md:1: shared/store/no-such-file.ts']);
  });
});
