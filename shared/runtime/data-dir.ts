/**
 * `DATA_DIR`: the folder where `npm start` (and the container image) keeps its embedded store, so a
 * restart keeps dedupe, acknowledgements, escalations due, Slack threads and heartbeats.
 *
 * Layout: `store/` is dynalite's LevelDB; `lock/` is a second, empty LevelDB this process holds open
 * for its whole life. LevelDB locks its folder with `fcntl` (released by the kernel when the process
 * ends, SIGKILL included), so a second instance on the same folder — on this host or in another
 * container sharing the volume — fails to open `lock/` and stops; it never reaches `store/`. Holding
 * `lock/` first also lets {@link openDataDir} open and close `store/` once as a check (damaged or
 * foreign-owned files stop the start with a message, not dynalite's unhandled error later) with no
 * other instance able to slip in before dynalite opens it again.
 *
 * Every check stops the start with a {@link StartupError} naming `DATA_DIR`: a folder that cannot be
 * created, is not writable by this user, has less than {@link MIN_FREE_BYTES} free, or is held by
 * another running instance.
 * @see https://github.com/google/leveldb/blob/main/doc/index.md (concurrency: one process per database)
 */
import { mkdir, rm, statfs, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { StartupError } from './startup-error.js';

/**
 * Least free space on the folder's file system at start, bytes. LevelDB writes a 4 MiB log before
 * it compacts it into tables of ~2 MiB, and a compaction writes its output before deleting its
 * input; a store of 10,000 alerts takes ~30 MiB. 64 MiB leaves room for that and a while to react.
 */
export const MIN_FREE_BYTES = 64 * 1024 * 1024;

/** The open folder: where dynalite keeps the store, and the lock to release after the store closed. */
export interface DataDir {
  /** dynalite's LevelDB folder (`DATA_DIR/store`). */
  storePath: string;
  /** Releases the folder's lock (after the store has closed). */
  release(): Promise<void>;
}

/** The file-system calls the checks make (tests inject a full disk). */
export interface DataDirFs {
  statfs(path: string): Promise<{ bavail: number | bigint; bsize: number | bigint }>;
}

const MiB = 1024 * 1024;

/**
 * Creates the folder if missing, checks it and takes its lock.
 * @param dir `DATA_DIR`, an absolute path
 * @throws StartupError naming `DATA_DIR`: cannot be created, not writable, full, held by another
 *   running instance, or its store cannot be opened
 */
export async function openDataDir(dir: string, fs: DataDirFs = { statfs }): Promise<DataDir> {
  await mkdir(dir, { recursive: true }).catch((err: NodeJS.ErrnoException) => {
    throw new StartupError(
      err.code === 'EEXIST' || err.code === 'ENOTDIR'
        ? `DATA_DIR: ${dir} is not a folder`
        : `DATA_DIR: cannot create ${dir} (${err.code ?? err.message})${ownershipHint(err.code)}`,
    );
  });
  await probeWrite(dir);
  const { bavail, bsize } = await fs.statfs(dir);
  const free = Number(bavail) * Number(bsize);
  if (free < MIN_FREE_BYTES)
    throw new StartupError(
      `DATA_DIR: ${dir} is full (${Math.floor(free / MiB)} MiB free on its file system; the store needs at least ${MIN_FREE_BYTES / MiB} MiB)`,
    );
  const lock = new ClassicLevel(join(dir, 'lock'));
  await lock.open().catch((err: LevelError) => {
    throw new StartupError(
      err.cause?.code === 'LEVEL_LOCKED'
        ? `DATA_DIR: ${dir} is in use by another running instance (its lock is held). One instance per folder: instances that share state need a DynamoDB table (TABLE_NAME)`
        : `DATA_DIR: cannot open the lock in ${dir} (${levelProblem(err)})`,
    );
  });
  const storePath = join(dir, 'store');
  const store = new ClassicLevel(storePath);
  try {
    await store.open();
    await store.close();
  } catch (err) {
    await lock.close();
    throw new StartupError(`DATA_DIR: cannot open the store in ${storePath} (${levelProblem(err as LevelError)})`);
  }
  return { storePath, release: () => lock.close() };
}

/** Writes and removes a small file: the folder is writable by this user and its disk takes a write. */
async function probeWrite(dir: string): Promise<void> {
  const probe = join(dir, `.write-check-${process.pid}`);
  try {
    await writeFile(probe, Buffer.alloc(64 * 1024), { flush: true });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new StartupError(
      code === 'ENOSPC' || code === 'EDQUOT'
        ? `DATA_DIR: ${dir} is full (${code}: a 64 KiB write failed)`
        : `DATA_DIR: ${dir} is not writable (${code ?? (err as Error).message})${ownershipHint(code)}`,
    );
  } finally {
    await rm(probe, { force: true }).catch(() => undefined);
  }
}

/** For a permission error: which user needs the folder (a container's volume is often root's). */
function ownershipHint(code: string | undefined): string {
  if (code !== 'EACCES' && code !== 'EPERM') return '';
  const uid = process.getuid?.();
  return uid === undefined ? '' : `: it must be writable by this process's user (uid ${uid}), e.g. chown ${uid} it`;
}

/** A failed open as abstract-level reports it: `LEVEL_DATABASE_NOT_OPEN`, LevelDB's error as its cause. */
type LevelError = Error & { cause?: { code?: string; message?: string } };

/** LevelDB's own words for a failed open (`IO error: …: Permission denied`, `Corruption: …`), never a stack. */
function levelProblem(err: LevelError): string {
  return (err.cause?.message ?? err.message).split('\n')[0]!;
}
