/**
 * Runs `npm start`'s entry (`node --import tsx functions/server.ts`) as a child process, as a user
 * would, and collects its JSON log lines. For end-to-end tests.
 */
import { spawn, type ChildProcess } from 'node:child_process';
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
}

/**
 * @param env the whole environment of the process (only PATH and HOME are inherited)
 * @throws Error with its output when it exits or does not log `listening` within 30 s
 */
export async function startPipelineProcess(env: Record<string, string>): Promise<PipelineProcess> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'functions/server.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
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
  };
}
