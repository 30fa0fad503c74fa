/**
 * The container image as users run it: the repository's `Dockerfile` built with buildah on a local
 * base of the default base's layout (`test/helpers/image.ts`), then containers of it run with the data
 * volume bound to a folder here, the Slack channel pointed at a loopback stand-in. The image must hold
 * the bundle and production packages only, run as its unprivileged user, answer its HEALTHCHECK, deliver
 * the README's first webhook, finish a delivery in flight on SIGTERM and exit 0, and, in a new
 * container on the same volume, send nothing for the same alert again.
 * Fails — never skips — without buildah.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LAMBDA_NODE_MAJOR } from '../../infra/node-function.js';
import { fixtureText } from '../helpers/fixtures.js';
import {
  buildah,
  descendantPid,
  ensureLocalBase,
  REPO_ROOT,
  runContainer,
  uidOf,
  type RunningContainer,
} from '../helpers/image.js';
import { freePort, pollUntil } from '../helpers/processes.js';

const IMAGE = 'localhost/llm-alert-pipeline:e2e';
const TOKEN = 'image-e2e-token-0123456789abcdef';
const VOLUME = '/var/lib/llm-alert-pipeline';
/** The official image's unprivileged user (`USER node`). */
const NODE_UID = 1000;
const BUILD_TIMEOUT_MS = 30 * 60_000;
const POLL = { deadlineMs: 60_000, intervalMs: 100 };

interface ImageConfig {
  User: string;
  Entrypoint: string[];
  Env: string[];
  Volumes: Record<string, unknown>;
  ExposedPorts: Record<string, unknown>;
  StopSignal: string;
  Healthcheck: { Test: string[] };
}

/** A Slack stand-in that holds back its answer to any message naming `held` until released. */
interface SlackStandIn {
  url: string;
  bodies: string[];
  release(): void;
  close(): Promise<void>;
}

async function startSlack(held: string): Promise<SlackStandIn> {
  const bodies: string[] = [];
  const waiting: ServerResponse[] = [];
  let released = false;
  const server: Server = createServer((req: IncomingMessage, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      bodies.push(body);
      if (body.includes(held) && !released) waiting.push(res);
      else res.end('ok');
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    bodies,
    release: () => {
      released = true;
      for (const res of waiting.splice(0)) res.end('ok');
    },
    close: () =>
      new Promise((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}

let config: ImageConfig;
let volume: string;
let slack: SlackStandIn;
const containers: string[] = [];
const running: RunningContainer[] = [];

/** A new container of the image, running its entrypoint with the volume bound; resolves once it listens. */
async function start(port: number): Promise<{ run: RunningContainer; url: string }> {
  const ctr = (await buildah(['from', '--pull=never', IMAGE])).trim();
  containers.push(ctr);
  const run = runContainer(ctr, config.Entrypoint, {
    env: { PORT: String(port), WEBHOOK_TOKEN: TOKEN, SLACK_WEBHOOK_URL: `${slack.url}/services/T0/B0/image` },
    volume: `${volume}:${VOLUME}`,
  });
  running.push(run);
  await pollUntil(
    async () => {
      if (run.child.exitCode !== null) throw new Error(`container exited ${run.child.exitCode}:\n${run.out()}`);
      return run.logs().find((l) => l.event === 'listening');
    },
    run.out,
    POLL,
  );
  return { run, url: `http://127.0.0.1:${port}` };
}

function post(url: string, body: string): Promise<Response> {
  return fetch(`${url}/v1/alertmanager`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
    body,
    signal: AbortSignal.timeout(30_000),
  });
}

beforeAll(async () => {
  // Not a skip: the suite needs buildah (.ci/run installs it).
  try {
    execFileSync('buildah', ['--version'], { stdio: 'ignore' });
  } catch {
    throw new Error('buildah is not installed: apt-get install buildah debootstrap (.ci/run does)');
  }
  const base = await ensureLocalBase(LAMBDA_NODE_MAJOR);
  await buildah([
    'bud',
    '--isolation',
    'chroot',
    '--format',
    'docker',
    '--pull=never',
    '--build-arg',
    `NODE_IMAGE=${base}`,
    '--tag',
    IMAGE,
    '--file',
    join(REPO_ROOT, 'Dockerfile'),
    REPO_ROOT,
  ]);
  const inspected = JSON.parse(await buildah(['inspect', '--type', 'image', IMAGE])) as {
    Docker: { config: ImageConfig };
  };
  config = inspected.Docker.config;
  volume = await mkdtemp(join(tmpdir(), 'image-e2e-'));
  await chown(volume, NODE_UID, NODE_UID);
  slack = await startSlack('GPUMemoryLeak');
}, BUILD_TIMEOUT_MS);

afterAll(async () => {
  for (const run of running) run.child.kill('SIGKILL');
  await slack?.close();
  for (const ctr of containers) await buildah(['rm', ctr]).catch(() => undefined);
  await buildah(['rmi', IMAGE]).catch(() => undefined);
  if (volume) await rm(volume, { recursive: true, force: true });
}, 120_000);

describe('the container image', () => {
  it("defaults to the official Node image of the Lambda's Node major", () => {
    const dockerfile = readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8');
    expect(/^ARG NODE_IMAGE=(\S+)$/m.exec(dockerfile)?.[1]).toBe(`node:${LAMBDA_NODE_MAJOR}-bookworm-slim`);
  });

  it('runs as an unprivileged user, with a HEALTHCHECK on /healthz, the data volume, and only the bundle', async () => {
    expect(config.User).toBe('node');
    expect(config.Healthcheck.Test.join(' ')).toContain('/healthz');
    expect(Object.keys(config.Volumes)).toEqual([VOLUME]);
    expect(config.Env).toContain(`DATA_DIR=${VOLUME}`);
    expect(Object.keys(config.ExposedPorts)).toEqual(['8080/tcp']);
    expect(config.StopSignal).toBe('SIGTERM');
    const ctr = (await buildah(['from', '--pull=never', IMAGE])).trim();
    containers.push(ctr);
    const listing = await buildah(['run', '--isolation', 'chroot', ctr, '--', 'sh', '-c', 'ls /app /app/node_modules']);
    const entries = listing.split(/\s+/);
    expect(entries).toEqual(expect.arrayContaining(['dist', 'node_modules', 'dynalite', 'classic-level', 'hono']));
    for (const absent of ['shared', 'functions', 'test', 'esbuild', 'typescript', 'vitest', 'aws-cdk-lib', 'tsx'])
      expect(entries, absent).not.toContain(absent);
    // `buildah from` copies the image's whole tree with the vfs driver: tens of seconds on a loaded machine.
  }, 180_000);

  it('delivers the README webhook, drains on SIGTERM, and after a restart on the volume sends nothing again', async () => {
    const first = await start(await freePort());
    expect(first.run.logs().find((l) => l.event === 'listening')?.state).toBe(`on disk in ${VOLUME} (DATA_DIR)`);
    const pid = await descendantPid(first.run.child.pid!, 'dist/server.mjs');
    expect(pid, first.run.out()).toBeDefined();
    expect(await uidOf(pid!)).toBe(NODE_UID);
    expect((await fetch(`${first.url}/healthz`)).status).toBe(200);
    // The HEALTHCHECK's own command, in the container (host network: chroot isolation has no namespace).
    const ctr = containers.at(-1)!;
    const env = ['--env', `PORT=${new URL(first.url).port}`];
    await buildah(['run', '--isolation', 'chroot', ...env, ctr, '--', ...config.Healthcheck.Test.slice(1)]);

    const readme = fixtureText('firing-queue-backlog-two-models');
    expect((await post(first.url, readme)).status).toBe(200);
    expect(slack.bodies.filter((b) => b.includes('VLLMQueueBacklog'))).toHaveLength(1);

    // A group in flight when SIGTERM comes (Slack holds its answer): it is delivered, answered 200, then the exit.
    const inFlight = post(first.url, fixtureText('firing-gpu-memory-leak'));
    await pollUntil(
      async () => (slack.bodies.some((b) => b.includes('GPUMemoryLeak')) ? true : undefined),
      first.run.out,
      POLL,
    );
    const exited = new Promise<number | null>((ok) => first.run.child.once('exit', ok));
    process.kill(pid!, 'SIGTERM');
    slack.release();
    expect((await inFlight).status).toBe(200);
    expect(await exited).toBe(0);

    const second = await start(await freePort());
    expect((await post(second.url, readme)).status).toBe(200);
    const decisions = () =>
      second.run.logs().filter((l) => l.event === 'alert deduped' && l.alertname === 'VLLMQueueBacklog');
    await pollUntil(async () => (decisions().length === 2 ? true : undefined), second.run.out, POLL);
    expect(decisions().map((l) => l.decision)).toEqual(['already notified', 'already notified']);
    expect(slack.bodies.filter((b) => b.includes('VLLMQueueBacklog'))).toHaveLength(1);
    const pid2 = await descendantPid(second.run.child.pid!, 'dist/server.mjs');
    const stopped = new Promise<number | null>((ok) => second.run.child.once('exit', ok));
    process.kill(pid2!, 'SIGTERM');
    expect(await stopped).toBe(0);
  }, 300_000);
});
