/**
 * The container image built and run with buildah (Debian package `buildah`), rootless of any daemon:
 * `--storage-driver vfs --isolation chroot`, as on machines without Docker. No image registry is
 * reachable here, so the Dockerfile's default base (`node:<major>-bookworm-slim`) is stood in for by a
 * local base of the same layout ({@link ensureLocalBase}): Debian bookworm from debootstrap, trimmed as
 * Debian's slim images are, Node.js from the npm registry's `node-linux-<arch>` package and npm in
 * /usr/local, a user `node` with uid 1000. Everything slow is cached between runs under
 * `~/.cache/llm-alert-pipeline` (like `.ci/run`'s Node): the Debian tree, the Node and npm packages,
 * buildah's own storage with the base image and the npm cache mount of the build.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CACHE = join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'llm-alert-pipeline');
/** buildah's storage (images, layers, the build's cache mounts), kept between runs. */
const STORAGE = join(CACHE, 'buildah');
const DEBIAN_SUITE = 'bookworm';
/** Where debootstrap fetches Debian from (`DEBIAN_MIRROR` overrides). */
const DEBIAN_MIRROR = process.env.DEBIAN_MIRROR || 'http://deb.debian.org/debian';
/** What Debian's slim images leave out (debuerreotype's slimification), and apt's caches. */
const SLIM_PATHS = [
  'usr/share/doc',
  'usr/share/man',
  'usr/share/info',
  'usr/share/locale',
  'var/cache/apt',
  'var/lib/apt/lists',
];
/** The npm major the official Node image of that major ships. */
const NPM_MAJOR = 11;
const LONG = { maxBuffer: 64 * 1024 * 1024, timeout: 15 * 60_000 };

/**
 * Runs buildah on the test's own storage.
 * @returns its stdout
 * @throws Error with its stderr when it fails (or is not installed: `ENOENT`)
 */
export async function buildah(args: string[]): Promise<string> {
  const global = ['--storage-driver', 'vfs', '--root', join(STORAGE, 'root'), '--runroot', join(STORAGE, 'run')];
  try {
    return (await run('buildah', [...global, ...args], { ...LONG, cwd: REPO_ROOT })).stdout;
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`buildah ${args.slice(0, 2).join(' ')} failed: ${e.stderr?.trim() || e.message}`);
  }
}

/** `buildah run`'s global options and the isolation every container of this test uses. */
export function buildahRunArgs(): string[] {
  return [
    '--storage-driver',
    'vfs',
    '--root',
    join(STORAGE, 'root'),
    '--runroot',
    join(STORAGE, 'run'),
    'run',
    '--isolation',
    'chroot',
  ];
}

/** Whether an image of that name is in the storage. */
async function hasImage(name: string): Promise<boolean> {
  return buildah(['inspect', '--type', 'image', name]).then(
    () => true,
    () => false,
  );
}

/** Installs npm packages into a cache folder of their own (as `.ci/run` does for Node), once. */
async function cachedPackages(folder: string, specs: string[]): Promise<string> {
  const prefix = join(CACHE, folder);
  if (!existsSync(join(prefix, 'node_modules'))) {
    await run(
      'npm',
      [
        'install',
        '--prefix',
        prefix,
        '--no-save',
        '--no-package-lock',
        '--no-audit',
        '--no-fund',
        '--loglevel=error',
        ...specs,
      ],
      LONG,
    );
  }
  return join(prefix, 'node_modules');
}

/** The Debian tree as a tar file, made once with debootstrap and trimmed like Debian's slim images. */
async function debianTree(): Promise<string> {
  const tar = join(CACHE, `debian-${DEBIAN_SUITE}-minbase-${process.arch}.tar`);
  if (existsSync(tar)) return tar;
  await mkdir(CACHE, { recursive: true });
  const tree = await mkdtemp(join(tmpdir(), 'debootstrap-'));
  try {
    await run('debootstrap', ['--variant=minbase', DEBIAN_SUITE, tree, DEBIAN_MIRROR], LONG);
    for (const path of SLIM_PATHS) await rm(join(tree, path), { recursive: true, force: true });
    await run('tar', ['-C', tree, '-cf', `${tar}.partial`, '.'], LONG);
    await run('mv', [`${tar}.partial`, tar]);
  } finally {
    await rm(tree, { recursive: true, force: true });
  }
  return tar;
}

/**
 * The local stand-in for `node:<major>-bookworm-slim`, built once into the test's storage.
 * @param nodeMajor the Node major of the Dockerfile's default base
 * @returns the image's name, for `--build-arg NODE_IMAGE=`
 */
export async function ensureLocalBase(nodeMajor: number): Promise<string> {
  const arch = process.arch;
  const modules = await cachedPackages(`image-node-${nodeMajor}-npm-${NPM_MAJOR}-${arch}`, [
    `node-linux-${arch}@${nodeMajor}`,
    `npm@${NPM_MAJOR}`,
  ]);
  const version = (await run(join(modules, `node-linux-${arch}/bin/node`), ['-v'])).stdout.trim();
  const name = `localhost/llm-alert-pipeline-test-base:node-${version}-${DEBIAN_SUITE}`;
  if (await hasImage(name)) return name;
  const tree = await debianTree();
  const ctr = (await buildah(['from', 'scratch'])).trim();
  try {
    await buildah(['add', ctr, tree, '/']);
    await buildah(['copy', ctr, join(modules, `node-linux-${arch}/bin/node`), '/usr/local/bin/node']);
    await buildah(['copy', ctr, join(modules, 'npm'), '/usr/local/lib/node_modules/npm']);
    const sh = (script: string) => buildah(['run', '--isolation', 'chroot', ctr, '--', 'sh', '-c', script]);
    await sh(
      'ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm && ' +
        'ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx && ' +
        'groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node',
    );
    await buildah([
      'config',
      '--env',
      `NODE_VERSION=${version.slice(1)}`,
      '--cmd',
      'node',
      ...(await extraCa(ctr)),
      ctr,
    ]);
    await buildah(['commit', '--rm', ctr, name]);
  } catch (err) {
    await buildah(['rm', ctr]).catch(() => undefined);
    throw err;
  }
  return name;
}

/**
 * The build's `npm ci` reaches the npm registry through this machine's network: where that needs an
 * extra certificate authority (a TLS-inspecting egress proxy, `NODE_EXTRA_CA_CERTS`), the base gets
 * the same file and setting. Nothing of it is the product's: the official image needs none.
 * @returns the `buildah config` options that set it, or none
 */
async function extraCa(ctr: string): Promise<string[]> {
  const file = process.env.NODE_EXTRA_CA_CERTS;
  if (!file || !existsSync(file)) return [];
  await buildah(['copy', ctr, file, '/usr/local/share/extra-ca-certificates.crt']);
  return ['--env', 'NODE_EXTRA_CA_CERTS=/usr/local/share/extra-ca-certificates.crt'];
}

/** A container of the image, running its entrypoint (host network: chroot isolation has no network namespace). */
export interface RunningContainer {
  child: ChildProcess;
  /** Everything it printed so far. */
  out(): string;
  /** JSON log lines so far. */
  logs(): Record<string, unknown>[];
}

/**
 * Starts `ctr`'s configured entrypoint, as its configured user, with `env` and the volume bound.
 * @param entrypoint the image's `Entrypoint` (from `buildah inspect`)
 */
export function runContainer(
  ctr: string,
  entrypoint: string[],
  options: { env: Record<string, string>; volume: string },
): RunningContainer {
  const env = Object.entries(options.env).flatMap(([k, v]) => ['--env', `${k}=${v}`]);
  const child = spawn('buildah', [...buildahRunArgs(), ...env, '--volume', options.volume, ctr, '--', ...entrypoint], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  return {
    child,
    out: () => out,
    logs: () =>
      out
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

/**
 * The pid of the `node` process under `rootPid` (children, grandchildren…) whose command line contains
 * `match`: the container's own process under `buildah run` (chroot isolation has no pid namespace;
 * buildah's `buildah-chroot-exec` above it carries the same arguments).
 */
export async function descendantPid(rootPid: number, match: string): Promise<number | undefined> {
  const parents = new Map<number, number>();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    // pid (comm) state ppid …: comm may hold spaces and parentheses; the last ')' ends it.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (ppid) parents.set(Number(entry), ppid);
  }
  const isUnder = (pid: number): boolean => {
    for (let p = parents.get(pid); p; p = parents.get(p)) if (p === rootPid) return true;
    return false;
  };
  for (const pid of parents.keys()) {
    if (!isUnder(pid)) continue;
    const argv = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0');
    if (/(^|\/)node$/.test(argv[0]!) && argv.join(' ').includes(match)) return pid;
  }
  return undefined;
}

/** The real user id of a process (`Uid:` of /proc/PID/status). */
export async function uidOf(pid: number): Promise<number> {
  return Number(/^Uid:\s+(\d+)/m.exec(await readFile(`/proc/${pid}/status`, 'utf8'))?.[1]);
}
