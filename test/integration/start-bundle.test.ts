/**
 * `npm start` runs what its `prestart` builds (`scripts/build-start.mjs`): the server bundle must
 * listen and take a webhook, the chart renderer must be a chunk of its own that the server file does not load
 * at start (ECharts, resvg), and must draw with its WebAssembly and font from node_modules, and stack traces must name the TypeScript sources.
 */
import { execFile, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { pollUntil } from '../helpers/processes.js';
import { afterAll, describe, expect, it } from 'vitest';
import { fixtureText } from '../helpers/fixtures.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);

/** package.json `start`'s node arguments (after `exec node`). */
function startArgs(): string[] {
  const start = (JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { scripts: { start: string } }).scripts
    .start;
  return start.split(/exec node /)[1]!.split(' ');
}

describe("npm start's bundle", () => {
  const children: ReturnType<typeof spawn>[] = [];
  afterAll(() => children.forEach((c) => c.kill('SIGKILL')));

  it('builds, listens and answers a webhook; the chart renderer is a lazy chunk that draws; traces name .ts files', async () => {
    await run(process.execPath, ['scripts/build-start.mjs'], { cwd: ROOT, timeout: 60_000 });
    const child = spawn(process.execPath, startArgs(), {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        PORT: '0',
        HOST: '127.0.0.1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let out = '';
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout!.on('data', (c: Buffer) => {
        out += c.toString();
        const m = /"webhook":"([^"]+)"/.exec(out);
        if (m) resolve(m[1]!);
      });
      child.once('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
    });
    const res = await fetch(url, {
      method: 'POST',
      body: fixtureText('firing-kv-cache-critical'),
      headers: { 'content-type': 'application/json' },
      redirect: 'manual',
    });
    expect(res.status).toBe(200);
    // The console channel's box comes after its group's log lines: both go through one batched writer
    // (a box written at once, before the logs waiting in the batch, read as belonging to nothing).
    const box = '─'.repeat(60);
    await pollUntil(
      async () => (out.includes(box) && out.includes('"channel delivered"')) || undefined,
      () => out,
      { deadlineMs: 10_000, intervalMs: 50 },
    );
    expect(out.indexOf('"event":"group received"'), out).toBeGreaterThan(-1);
    expect(out.indexOf('"event":"group received"')).toBeLessThan(out.indexOf(box));
    expect(out.indexOf(box)).toBeLessThan(out.indexOf('"channel delivered"'));

    const server = readFileSync(`${ROOT}.tmp/start/server.mjs`, 'utf8');
    expect(server).not.toMatch(/from ["'](echarts|@resvg\/resvg-wasm)/);
    const chunk = readdirSync(`${ROOT}.tmp/start/chunks`).find((f) => /^render-.*\.mjs$/.test(f));
    expect(chunk).toBeDefined();
    const script = `const r = await import('./.tmp/start/chunks/${chunk}');
      const png = await r.renderMessagePng('heading', 'message');
      console.log(png[1] === 0x50 && png[2] === 0x4e && png[3] === 0x47 ? 'png' : 'not png');
      // The first frame in the bundle's own code (a native one, such as Date's, may come first).
      const ours = (e) => e.stack.split('\\n').slice(1).find((l) => l.includes('.ts:'));
      await r.renderChartPng({}).catch((e) => console.log(ours(e)));`;
    const { stdout } = await run(process.execPath, ['--enable-source-maps', '--input-type=module', '-e', script], {
      cwd: ROOT,
      timeout: 60_000,
    });
    expect(stdout).toMatch(/^png\n\s+at .*shared\/[a-z-]+\/[a-z-]+\.ts:\d+:\d+\)?$/m);
  }, 120_000);
  it('names the settings a feature still needs at start-up: PUBLIC_URL set without ACK_SECRET says ACK_SECRET', async () => {
    // Runs the bundle the test above built.
    const child = spawn(process.execPath, startArgs(), {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        PORT: '0',
        HOST: '127.0.0.1',
        PUBLIC_URL: 'http://127.0.0.1:8080',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    const listening = await new Promise<Record<string, unknown>>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (c: Buffer) => {
        out += c.toString();
        const line = out.split('\n').find((l) => l.includes('"event":"listening"'));
        if (line) resolve(JSON.parse(line) as Record<string, unknown>);
      });
      child.once('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
    });
    // Before: "off (set PUBLIC_URL and ACK_SECRET)" whichever was missing.
    expect(listening.acknowledge).toBe('off (set ACK_SECRET)');
    expect(listening.slackInteractions).toBe('off (set SLACK_SIGNING_SECRET and ACK_SECRET)');
  }, 60_000);
});
