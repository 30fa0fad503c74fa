/**
 * `npm start` with `AWS_ENDPOINT_URL_DYNAMODB` pointing nowhere must stop with one line naming the
 * setting and what failed, not a stack trace that names neither (breakit finding).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Runs the `npm start` entry until it exits (at most 60 s); its exit code and everything it printed. */
function runServer(env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'functions/server.ts'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

describe('npm start with an unreachable AWS_ENDPOINT_URL_DYNAMODB', () => {
  it('exits 1 with a line naming the setting and the network error, no stack trace', async () => {
    const { code, out } = await runServer({
      PORT: '0',
      HOST: '127.0.0.1',
      // Port 9 (discard) on loopback: nothing listens there.
      AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:9',
      AWS_REGION: 'local',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
    });
    expect(code, out).toBe(1);
    expect(out).toMatch(/^llm-alert-pipeline: AWS_ENDPOINT_URL_DYNAMODB: .*(ECONNREFUSED|not reachable)/m);
    expect(out).not.toMatch(/^\s+at /m);
  }, 90_000);
});
