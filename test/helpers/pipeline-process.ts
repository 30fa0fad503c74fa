/**
 * Runs `npm start`'s entry (`node --import tsx functions/server.ts`) as a child process, as a user
 * would, and collects its JSON log lines. For end-to-end tests.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pollUntil } from './processes.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface PipelineProcess {
  /** Base URL from its `listening` line. */
  url: string;
  /** Every JSON log line so far, parsed. */
  logs: Record<string, unknown>[];
  /** Everything it printed (stdout and stderr), for failure messages. */
  out(): string;
  /** Sends `signal` (default SIGTERM: a graceful stop; SIGKILL: a crash), then waits for the exit. Idempotent. */
  stop(sig?: NodeJS.Signals): Promise<void>;
  /** SIGKILL (no clean-up of any kind, as a crash or an OOM kill), then waits for the exit. Idempotent. */
  kill(): Promise<void>;
  /** Its exit code once it exited (`null` while it runs or when a signal ended it). */
  exitCode(): number | null;
}

let sharedNode: string | undefined;

/**
 * This Node binary where another user can run it: the running one may sit under root's 0700 home (a Node
 * fetched into `~/.cache`, as CI's run on the Lambda's Node major does), so it is copied once to a
 * world-readable temporary folder.
 */
function nodeForOtherUsers(): string {
  if (sharedNode && existsSync(sharedNode)) return sharedNode;
  const dir = mkdtempSync(join(tmpdir(), 'node-for-other-users-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  chmodSync(dir, 0o755);
  sharedNode = join(dir, 'node');
  copyFileSync(process.execPath, sharedNode);
  chmodSync(sharedNode, 0o755);
  return sharedNode;
}

/** Spawns the entry; `uid`/`gid` run it as another user (the test runs as root). */
function spawnEntry(env: Record<string, string>, user: { uid?: number; gid?: number } = {}): ChildProcess {
  const node = user.uid === undefined ? process.execPath : nodeForOtherUsers();
  return spawn(node, ['--import', 'tsx', 'functions/server.ts'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...user,
  });
}

/**
 * Runs the entry until it exits (at most 60 s, then SIGKILL): for starts that must fail.
 * @param env as {@link startPipelineProcess}
 * @param user run it as this user and group (needs root)
 * @returns its exit code and everything it printed
 */
export function runPipelineUntilExit(
  env: Record<string, string>,
  user: { uid?: number; gid?: number } = {},
): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawnEntry(env, user);
    let out = '';
    child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    // A spawn refused (EACCES, ENOENT) emits no exit: answered here, not left to hang the test.
    child.on('error', (err) => {
      clearTimeout(timer);
      resolve({ code: null, out: `${out}spawn failed: ${err.message}` });
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

/**
 * @param env the whole environment of the process (only PATH and HOME are inherited)
 * @throws Error with its output when it exits or does not log `listening` within 30 s
 */
export async function startPipelineProcess(env: Record<string, string>): Promise<PipelineProcess> {
  const child = spawnEntry(env);
  let out = '';
  let partial = '';
  const logs: Record<string, unknown>[] = [];
  child.stdout!.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    // A chunk may end mid-line: keep the tail for the next one.
    const lines = (partial + chunk.toString()).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) if (line.startsWith('{')) logs.push(JSON.parse(line) as Record<string, unknown>);
  });
  child.stderr!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const listening = await pollUntil(
    async () => {
      if (child.exitCode !== null) throw new Error(`pipeline exited (${child.exitCode}):\n${out}`);
      return logs.find((l) => l.event === 'listening');
    },
    () => out,
    { deadlineMs: 30_000, intervalMs: 100 },
  );
  const signal = async (name: NodeJS.Signals) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((ok) => child.once('exit', ok));
    child.kill(name);
    await exited;
  };
  return {
    url: listening.url as string,
    logs,
    out: () => out,
    stop: (sig: NodeJS.Signals = 'SIGTERM') => signal(sig),
    kill: () => signal('SIGKILL'),
    exitCode: () => child.exitCode,
  };
}
