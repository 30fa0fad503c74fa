/**
 * `DATA_DIR` checked at start: `npm start`'s entry stops with one line naming `DATA_DIR` when the
 * folder is held by another running instance or not writable by its user; `openDataDir` itself when
 * the folder is a file, its disk is full, or its store is damaged. Unset, the start-up line says the
 * state is in memory.
 */
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIN_FREE_BYTES, openDataDir } from '../../shared/runtime/data-dir.js';
import { StartupError } from '../../shared/runtime/startup-error.js';
import { runPipelineUntilExit, startPipelineProcess, type PipelineProcess } from '../helpers/pipeline-process.js';

const BASE_ENV = { PORT: '0', HOST: '127.0.0.1', HEARTBEAT_ALERTNAME: '' };
/** The unprivileged user the not-writable case runs as when the tests run as root (root writes anywhere). */
const NOBODY = 65534;

let root: string;
const running: PipelineProcess[] = [];

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'data-dir-start-'));
  // mkdtemp's 0700 would stop the unprivileged user at the parent, before the folder under test.
  await chmod(root, 0o755);
});

afterAll(async () => {
  await Promise.allSettled(running.map((p) => p.kill()));
  await rm(root, { recursive: true, force: true });
});

/** The message `openDataDir` stops with. */
async function refusal(dir: string, fs?: Parameters<typeof openDataDir>[1]): Promise<string> {
  const error = await openDataDir(dir, fs).then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(StartupError);
  return (error as StartupError).message;
}

describe('npm start and DATA_DIR', () => {
  it('says the state is in memory when DATA_DIR is unset, and where it is when set', async () => {
    const memory = await startPipelineProcess(BASE_ENV);
    running.push(memory);
    expect(memory.logs.find((l) => l.event === 'listening')?.state).toBe('in memory — lost on restart; set DATA_DIR');
    await memory.stop();
    const dir = join(root, 'state');
    const disk = await startPipelineProcess({ ...BASE_ENV, DATA_DIR: dir });
    running.push(disk);
    expect(disk.logs.find((l) => l.event === 'listening')?.state).toBe(`on disk in ${dir} (DATA_DIR)`);
    await disk.stop();
  }, 120_000);

  it('stops a second instance on a folder another running instance holds', async () => {
    const dir = join(root, 'shared');
    const first = await startPipelineProcess({ ...BASE_ENV, DATA_DIR: dir });
    running.push(first);
    const second = await runPipelineUntilExit({ ...BASE_ENV, DATA_DIR: dir });
    expect(second.code, second.out).toBe(1);
    expect(second.out).toContain(
      `llm-alert-pipeline: DATA_DIR: ${dir} is in use by another running instance (its lock is held). One instance per folder: instances that share state need a DynamoDB table (TABLE_NAME)`,
    );
    expect(second.out).not.toMatch(/^\s+at /m);
    // The first still serves; once it stopped, the folder is free again.
    expect((await fetch(`${first.url}/healthz`)).status).toBe(200);
    await first.stop();
    const third = await startPipelineProcess({ ...BASE_ENV, DATA_DIR: dir });
    running.push(third);
    await third.stop();
  }, 120_000);

  it('stops when the folder is not writable by its user, naming the user to give it to', async () => {
    const dir = join(root, 'read-only');
    await mkdir(dir, { mode: 0o555 });
    await chmod(dir, 0o555);
    const asRoot = process.getuid?.() === 0;
    const { code, out } = await runPipelineUntilExit(
      { ...BASE_ENV, DATA_DIR: dir },
      asRoot ? { uid: NOBODY, gid: NOBODY } : {},
    );
    const uid = asRoot ? NOBODY : process.getuid?.();
    expect(code, out).toBe(1);
    expect(out).toContain(
      `llm-alert-pipeline: DATA_DIR: ${dir} is not writable (EACCES): it must be writable by this process's user (uid ${uid}), e.g. chown ${uid} it`,
    );
  }, 90_000);
});

describe('openDataDir', () => {
  it('refuses a file, a full disk and a damaged store, naming DATA_DIR', async () => {
    const file = join(root, 'a-file');
    await writeFile(file, 'x');
    expect(await refusal(file)).toBe(`DATA_DIR: ${file} is not a folder`);

    const full = join(root, 'full');
    const tenMiB = { statfs: async () => ({ bavail: 2560, bsize: 4096 }) };
    expect(await refusal(full, tenMiB)).toBe(
      `DATA_DIR: ${full} is full (10 MiB free on its file system; the store needs at least ${MIN_FREE_BYTES / 1024 / 1024} MiB)`,
    );

    const damaged = join(root, 'damaged');
    await mkdir(join(damaged, 'store'), { recursive: true });
    await writeFile(join(damaged, 'store', 'CURRENT'), 'MANIFEST-999999\n');
    expect(await refusal(damaged)).toMatch(
      new RegExp(`^DATA_DIR: cannot open the store in ${damaged}/store \\(.+\\)$`),
    );
    // The refused start released the folder's lock: the next check reaches the store again.
    expect(await refusal(damaged)).toMatch(/cannot open the store/);
  });

  it('holds the folder until released', async () => {
    const dir = join(root, 'held');
    const held = await openDataDir(dir);
    expect(await refusal(dir)).toMatch(/is in use by another running instance/);
    await held.release();
    await (await openDataDir(dir)).release();
  });
});
