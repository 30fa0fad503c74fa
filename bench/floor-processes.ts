/**
 * The processes the floor benchmark compares: the product as `npm start` runs it (its `prestart`
 * bundle, with its embedded store or with the store in another process), the bare relay (`relay.mjs`) and a stand-alone dynalite; the webhook bodies it posts.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { stormWebhook } from '../test/integration/storm-webhook.js';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));

export interface Served {
  url: string;
  pid: number;
  /** Resident set size now and its peak, MiB (Linux `/proc`). */
  rss(): { rssMiB: number; peakMiB: number };
  stop(): Promise<void>;
}

/**
 * Starts `node ...args` and waits for its first line that names a listening port.
 * @param args node's arguments ({@link npmStartArgs} are `npm start`'s)
 */
export async function serve(
  args: string[],
  env: Record<string, string>,
  portLine = /"listen":"[^"]*:(\d+)"|listening (\d+)/,
): Promise<Served> {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => void (stderr = (stderr + d.toString()).slice(-4000)));
  const port = await new Promise<string>((resolve, reject) => {
    let out = '';
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = portLine.exec(out);
      if (m) resolve(m[1] ?? m[2]!);
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code}: ${stderr}`)));
    setTimeout(() => reject(new Error(`${args.join(' ')} did not listen within 60 s: ${stderr}`)), 60_000).unref();
  });
  // Keep draining its log lines (info level, as `npm start` writes them) so it never blocks on a full
  // pipe; `BENCH_LOG_DIR` keeps them, one file per process.
  if (process.env.BENCH_LOG_DIR) child.stdout!.pipe(createWriteStream(`${process.env.BENCH_LOG_DIR}/${child.pid}.log`));
  else child.stdout!.resume();
  return { url: `http://127.0.0.1:${port}`, pid: child.pid!, rss: () => rss(child.pid!), stop: () => stop(child) };
}

function rss(pid: number): { rssMiB: number; peakMiB: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { rssMiB: Math.round(kib('VmRSS') / 1024), peakMiB: Math.round(kib('VmHWM') / 1024) };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** package.json `start`: `[VAR=value ...] exec node <args>`. */
function startScript(): { env: Record<string, string>; args: string[] } {
  const start = (JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { scripts: { start: string } }).scripts
    .start;
  const [assignments = '', command = ''] = start.split(/\s*exec node /);
  return {
    env: Object.fromEntries(
      assignments
        .split(/\s+/)
        .filter(Boolean)
        .map((a) => a.split('=') as [string, string]),
    ),
    args: command.split(' '),
  };
}

let built = false;

/** `npm start`'s own command line (package.json `start`), kept in step with it; runs its `prestart` build once per bench. */
export function npmStartArgs(): string[] {
  if (!built) execFileSync('npm', ['run', '--silent', 'prestart'], { cwd: ROOT, stdio: 'inherit' });
  built = true;
  return startScript().args;
}

/** The environment variables package.json `start` sets before `exec node` (e.g. `MALLOC_ARENA_MAX`). */
export function npmStartEnv(): Record<string, string> {
  return startScript().env;
}

/** `npm start`'s node flags without its entry file (the last argument). */
export function nodeFlags(): string[] {
  return npmStartArgs().slice(0, -1);
}

let series = 0;

/**
 * A webhook body of `n` alerts never seen before (fresh fingerprints), of the shipped rules' kinds.
 * @param truncatedAlerts Alertmanager's `truncatedAlerts`
 */
export function newGroup(n: number, truncatedAlerts = 0): string {
  const tag = `${process.pid.toString(16)}${(series++).toString(16).padStart(6, '0')}`;
  const message = stormWebhook(n, truncatedAlerts, new Date(Date.now() - 60_000).toISOString());
  message.groupKey = `{}:{cluster="prod-eu", bench="${tag}"}`;
  for (const alert of message.alerts) alert.fingerprint = `${tag}${alert.fingerprint.slice(1)}`;
  return JSON.stringify(message);
}

/** Posts one body; resolves when the answer is read. @returns milliseconds and status */
export async function post(url: string, body: string): Promise<{ ms: number; status: number }> {
  const started = performance.now();
  const res = await fetch(`${url}/v1/alertmanager`, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json' },
  });
  await res.arrayBuffer();
  return { ms: performance.now() - started, status: res.status };
}
