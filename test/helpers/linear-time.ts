/**
 * Telling linear text handling from super-linear, without timings that flake on a busy machine.
 *
 * A pattern that backtracks quadratically costs 16 times as much on a 4 times longer input; a linear
 * one about 4 times. So a text-handling function is run on an adversarial input at two lengths,
 * `n` and `4n`, and judged by the growth, measured in CPU time of this process (a loaded machine
 * stretches wall-clock time, not the CPU time the work takes). At the largest length a quadratic
 * pattern costs tens to hundreds of milliseconds; anything under {@link NEGLIGIBLE_MS} is linear
 * enough whatever its growth, so small timings, where the noise is, never decide.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import ts from 'typescript';

/** Field length the growth is judged at, characters: the pipeline's per-field cut (16 KiB) is 4×. */
export const BASE_LENGTH = 4096;
/**
 * CPU time at `4 × BASE_LENGTH` below which no growth is judged, milliseconds: a quadratic pattern takes
 * 100 or more there, while a garbage collection landing on a cheap call can add a few.
 */
export const NEGLIGIBLE_MS = 20;
/** Growth from `n` to `4n` judged super-linear (linear: ~4, quadratic: ~16). */
export const MAX_GROWTH = 10;

/** CPU time of this process so far (user + system), milliseconds. */
export function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

setFlagsFromString('--expose-gc');
/**
 * A full garbage collection, now. Run before each call that confirms a growth, so that the collection
 * a call pays for is of its own garbage: otherwise a major collection of what earlier calls (and the test file)
 * left lands in whichever call crosses the heap's limit, tens of milliseconds that are no property
 * of the input (seen: a linear path measured 1.5 ms at `n` and 31.8 ms at `4n`, once in 8).
 */
const collectGarbage = runInNewContext('gc') as () => void;

/**
 * The CPU time of one call of `fn(input)`, milliseconds.
 * @param collect collect earlier garbage first (tens of milliseconds on a large heap: for confirming only)
 */
export async function cost<T>(fn: (input: T) => unknown, input: T, collect = false): Promise<number> {
  if (collect) collectGarbage();
  const start = cpuMs();
  await fn(input);
  return cpuMs() - start;
}

export interface Growth {
  /** CPU milliseconds at `n` and `4n`. */
  small: number;
  large: number;
  ratio: number;
}

/**
 * How `fn` grows on `make(n)` → `make(4n)`, or `undefined` when it is linear: negligible at `4n`, or
 * growing at most {@link MAX_GROWTH}-fold. A growth beyond is confirmed before it is called
 * super-linear: five more calls at each length, alternating, each on a fresh input (what `fn`
 * remembers of an input must not make a later call cheap) and after a full garbage collection, the
 * least of each.
 * @param make the adversarial input of about `n` characters
 */
export async function superLinear<T>(
  fn: (input: T) => unknown,
  make: (n: number) => T,
  n = BASE_LENGTH,
): Promise<Growth | undefined> {
  await fn(make(n)); // warm-up: compiled code and lazily built state, not the input, on the first call
  const growth = async (rounds: number, collect: boolean): Promise<Growth> => {
    let [small, large] = [Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY];
    for (let i = 0; i < rounds; i++) {
      small = Math.min(small, await cost(fn, make(n), collect));
      large = Math.min(large, await cost(fn, make(4 * n), collect));
    }
    return { small, large, ratio: large / Math.max(small, 0.1) };
  };
  const first = await growth(1, false);
  if (first.large < NEGLIGIBLE_MS || first.ratio <= MAX_GROWTH) return undefined;
  const confirmed = await growth(5, true);
  return confirmed.ratio > MAX_GROWTH && confirmed.large >= NEGLIGIBLE_MS ? confirmed : undefined;
}

/** An adversarial input: `make(n)` is about `n` characters. */
export interface Pump {
  name: string;
  make: (n: number) => string;
}

/** Ends every pumped input: a character no pattern here expects, so the match fails at the very end. */
const END = '\u0001';

/**
 * `prefix` once, then `unit` repeated to about `n` characters, then a character nothing matches.
 * @example pump('(up', ' ') // '(up' + 16,000 spaces for n = 16,000
 */
export function pump(prefix: string, unit: string): Pump {
  return {
    name: `${JSON.stringify(prefix)} + ${JSON.stringify(unit)}×n`,
    make: (n) => prefix + unit.repeat(Math.max(1, Math.floor(n / unit.length))) + END,
  };
}

/** `first` then `second`, each repeated to about `n / 2` characters (`up{up{…}` then spaces). */
export function halves(first: string, second: string): Pump {
  const half = (unit: string, n: number) => unit.repeat(Math.max(1, Math.floor(n / 2 / unit.length)));
  return {
    name: `${JSON.stringify(first)}×n/2 + ${JSON.stringify(second)}×n/2`,
    make: (n) => half(first, n) + half(second, n) + END,
  };
}

/** `unit` repeated to about `n` characters (`up{up{up{…`). */
export function repeat(unit: string): Pump {
  return {
    name: `${JSON.stringify(unit)}×n`,
    make: (n) => unit.repeat(Math.max(1, Math.floor(n / unit.length))) + END,
  };
}

/** Characters every pattern is tried with: whitespace, word characters, PromQL's and markup's punctuation, non-ASCII. */
export const BASE_CHARS = [
  ' ',
  '\t',
  '\n',
  '\r',
  'a',
  'Z',
  '_',
  ':',
  '0',
  '.',
  '-',
  '{',
  '}',
  '(',
  ')',
  '[',
  ']',
  '"',
  "'",
  '`',
  '\\',
  '/',
  '=',
  '~',
  '!',
  '<',
  '>',
  ',',
  '|',
  '#',
  '*',
  '&',
  '%',
  '+',
  '$',
  '@',
  ';',
  '?',
  'é',
  '\u00a0',
  '\u200b',
  '\u202e',
  '\u{1f600}',
  '\ud800',
  '\u0000',
];

/** Representatives of the character classes a pattern names (`\s`, `\d`, `\w`, `.`, `\p{…}`). */
const CLASS_CHARS: Record<string, string[]> = {
  s: [' ', '\n', '\t'],
  S: ['a'],
  d: ['0'],
  D: ['a'],
  w: ['a', '_', '0'],
  W: [' ', '-'],
  b: [],
  B: [],
  n: ['\n'],
  r: ['\r'],
  t: ['\t'],
};

/** What opens a group that is not plain capturing: `(?:`, `(?=`, `(?!`, `(?<=`, `(?<!`, `(?<name>`. */
const GROUP_SYNTAX = /^\(\?(?:<[=!]|[:=!]|<[A-Za-z]\w*>)/;

/**
 * The characters a pattern's source names (literals, class members and range ends, shorthand classes'
 * representatives) and its literal runs of two or more characters (`up`, `bool`, `Source:`): what
 * its adversarial inputs are built from.
 */
export function patternParts(source: string): { chars: string[]; literals: string[] } {
  const chars = new Set<string>();
  const literals = new Set<string>();
  let run = '';
  const flush = () => {
    if (run.length >= 2) literals.add(run);
    run = '';
  };
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (c === '\\') {
      const e = source[++i] ?? '';
      if (e in CLASS_CHARS) {
        for (const r of CLASS_CHARS[e]!) chars.add(r);
        flush();
      } else if ('pPux'.includes(e) || /\d/.test(e)) {
        chars.add('a');
        chars.add('é');
        flush();
        if (source[i + 1] === '{') i = source.indexOf('}', i);
      } else {
        chars.add(e);
        run += e;
      }
    } else if (c === '[') {
      flush();
      let j = i + 1;
      if (source[j] === '^') {
        chars.add('a');
        chars.add(' ');
        j++;
      }
      for (; j < source.length && source[j] !== ']'; j++) {
        if (source[j] === '\\') {
          const e = source[++j] ?? '';
          for (const r of CLASS_CHARS[e] ?? [e]) chars.add(r);
        } else chars.add(source[j]!);
      }
      i = j;
    } else if ('*+?{'.includes(c)) {
      run = run.slice(0, -1);
      flush();
      if (c === '{') i = Math.max(i, source.indexOf('}', i));
    } else if ('()|^$.'.includes(c)) {
      flush();
      if (c === '.') chars.add('a');
      const syntax = c === '(' ? GROUP_SYNTAX.exec(source.slice(i))?.[0] : undefined;
      if (syntax) i += syntax.length - 1;
    } else {
      chars.add(c);
      run += c;
    }
  }
  flush();
  return { chars: [...chars], literals: [...literals] };
}

/**
 * Adversarial inputs for one pattern: each of its characters and {@link BASE_CHARS} repeated, and
 * each of its literals followed by (or repeated with) each character a quantifier could consume.
 */
export function patternPumps(source: string): Pump[] {
  const { chars, literals } = patternParts(source);
  const all = [...new Set([...chars, ...BASE_CHARS])];
  const consumed = [...new Set([...chars, ' ', 'a', '0', '\n'])];
  return [
    ...all.map((c) => repeat(c)),
    ...literals.flatMap((l) => [repeat(l), ...consumed.flatMap((c) => [pump(l, c), repeat(l + c)])]),
  ];
}

/** A regular expression literal in the product's sources. */
export interface RegexLiteral {
  /** Path relative to the repository, `shared/enrich/classify.ts`. */
  file: string;
  line: number;
  regex: RegExp;
}

/** Every `.ts` file under `dir`, tests excluded. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? sources(join(dir, e.name))
      : e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')
        ? [join(dir, e.name)]
        : [],
  );
}

/**
 * The regular expression literals (`/…/flags`) and the places that build one at run time
 * (`new RegExp(…)`, `RegExp(…)`) in every `.ts` file under `dir`, read with the TypeScript parser.
 */
export function regexSites(root: string, dir: string): { literals: RegexLiteral[]; dynamic: string[] } {
  const literals: RegexLiteral[] = [];
  const dynamic: string[] = [];
  for (const path of sources(join(root, dir))) {
    const file = relative(root, path);
    const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node) => {
      const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
      if (ts.isRegularExpressionLiteral(node)) {
        const text = node.text;
        const end = text.lastIndexOf('/');
        literals.push({ file, line, regex: new RegExp(text.slice(1, end), text.slice(end + 1)) });
      } else if (
        (ts.isNewExpression(node) || ts.isCallExpression(node)) &&
        ts.isIdentifier(node.expression) &&
        node.expression.text === 'RegExp'
      ) {
        dynamic.push(`${file}:${line}`);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return { literals, dynamic };
}

/** Runs the pattern over the whole input, every match (what `replace(/…/g)` does, and what `test` does on no match). */
export function scanAll(regex: RegExp): (input: string) => unknown {
  const flags = regex.flags.replace('y', '');
  const global = new RegExp(regex.source, flags.includes('g') ? flags : `${flags}g`);
  return (input) => input.replace(global, '');
}

/**
 * The regular expressions that ran on a string containing `mark` while `run` ran (every `test`,
 * `exec`, `match`, `replace`, `split`, `search` goes through `RegExp.prototype.exec`), by
 * `/source/flags`. The patched `exec` is restored before this returns.
 */
export async function regexesSeeing(mark: string, run: () => Promise<void>): Promise<Map<string, RegExp>> {
  const seen = new Map<string, RegExp>();
  const exec = RegExp.prototype.exec;
  RegExp.prototype.exec = function (this: RegExp, input: string) {
    if (typeof input === 'string' && input.includes(mark)) seen.set(`/${this.source}/${this.flags}`, this);
    return exec.call(this, input);
  };
  try {
    await run();
  } finally {
    RegExp.prototype.exec = exec;
  }
  return seen;
}
