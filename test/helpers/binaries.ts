/**
 * Locates the real Prometheus and Alertmanager binaries that the config and end-to-end
 * tests run. A missing binary is an error, never a skip: the suite must fail loudly on a
 * machine that lacks them rather than pass having tested nothing.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Absolute paths of the four binaries the tests use. */
export interface Binaries {
  prometheus: string;
  promtool: string;
  /** Debian names it `prometheus-alertmanager`; upstream tarballs `alertmanager`. */
  alertmanager: string;
  amtool: string;
}

/** What to run when a binary is missing (Debian/Ubuntu packages). */
export const INSTALL_HINT = 'apt-get install prometheus prometheus-alertmanager';

/** Debian package that ships each binary. */
const PACKAGE_OF: Record<keyof Binaries, string> = {
  prometheus: 'prometheus',
  promtool: 'prometheus',
  alertmanager: 'prometheus-alertmanager',
  amtool: 'prometheus-alertmanager',
};

/** Accepted file names, in order of preference. */
const NAMES_OF: Record<keyof Binaries, readonly string[]> = {
  prometheus: ['prometheus'],
  promtool: ['promtool'],
  alertmanager: ['prometheus-alertmanager', 'alertmanager'],
  amtool: ['amtool'],
};

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Directories searched: `$PATH`, then `/usr/bin` (in case PATH was trimmed). */
function searchDirs(): string[] {
  const fromPath = (process.env.PATH ?? '').split(delimiter).filter((d) => d !== '');
  return [...fromPath, '/usr/bin'];
}

/**
 * Absolute path of one of the binaries.
 *
 * @param which - the binary's role, e.g. `'alertmanager'` (found as `prometheus-alertmanager` or `alertmanager`)
 * @param dirs - where to look; default `$PATH`, then `/usr/bin`
 * @returns the first executable match
 * @throws Error naming the missing binary and the Debian package to install
 */
export function findBinary(which: keyof Binaries, dirs: readonly string[] = searchDirs()): string {
  for (const name of NAMES_OF[which]) {
    for (const dir of dirs) {
      const candidate = join(dir, name);
      if (isExecutable(candidate)) return candidate;
    }
  }
  throw new Error(
    `${NAMES_OF[which].join(' or ')} not found in ${dirs.join(':')}: install Debian package ` +
      `${PACKAGE_OF[which]} (${INSTALL_HINT})`,
  );
}

/**
 * Absolute paths of all four binaries.
 *
 * @throws Error from {@link findBinary} for the first one missing
 */
export function requireBinaries(): Binaries {
  return {
    prometheus: findBinary('prometheus'),
    promtool: findBinary('promtool'),
    alertmanager: findBinary('alertmanager'),
    amtool: findBinary('amtool'),
  };
}

/** Outcome of {@link runBinary}: the exit code (`null` if killed by a signal) and both streams. */
export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a binary to completion (at most `timeoutMs`, default 30 s) and reports its exit code
 * instead of throwing on a non-zero one, so tests can assert on failures too.
 *
 * @param input - written to its stdin, then closed
 * @throws Error only when it cannot be spawned at all
 */
export function runBinary(
  path: string,
  args: readonly string[],
  options: { cwd?: string; input?: string; timeoutMs?: number } = {},
): Promise<RunResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(path, args, { cwd: options.cwd, timeout: options.timeoutMs ?? 30_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolvePromise({ code, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}
