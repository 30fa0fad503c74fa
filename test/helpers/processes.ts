/**
 * Starts and stops the real Prometheus and Alertmanager binaries for tests, each in its own
 * temporary directory and on a free loopback port. Processes are killed on `stop()` and,
 * as a last resort, when the test process exits.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';
import { findBinary } from './binaries.js';

/** A running binary. */
export interface RunningProcess {
  /** Base URL, e.g. `http://127.0.0.1:40123` (no trailing slash). */
  url: string;
  /** The process's stderr so far (last 64 KiB), for failure messages. */
  output(): string;
  /** SIGTERM, then SIGKILL after 5 s; removes the temporary directory. Idempotent. */
  stop(): Promise<void>;
}

/** The shipped rule and Alertmanager files, resolved from the repository root. */
export const SHIPPED = {
  rules: fileURLToPath(new URL('../../infra/prometheus/vllm-rules.yml', import.meta.url)),
  prometheusConfig: fileURLToPath(new URL('../../infra/prometheus/prometheus.example.yml', import.meta.url)),
  alertmanagerConfig: fileURLToPath(new URL('../../infra/alertmanager/alertmanager.example.yml', import.meta.url)),
} as const;

const READY_TIMEOUT_MS = 20_000;
const STOP_GRACE_MS = 5_000;
const MAX_OUTPUT_CHARS = 64 * 1024;
const PORT_ATTEMPTS = 3;

/** Running children and their temporary directories, cleaned up if the test process exits first. */
const live = new Map<ChildProcess, string>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  const killAll = () =>
    live.forEach((dir, child) => {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    });
  process.once('exit', killAll);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      killAll();
      process.kill(process.pid, signal);
    });
  }
}

/** A TCP port that was free on 127.0.0.1 a moment ago (the OS picks it). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((ok, fail) => server.once('error', fail).listen(0, '127.0.0.1', ok));
  const address = server.address();
  await new Promise<void>((ok) => server.close(() => ok()));
  if (address === null || typeof address === 'string') throw new Error('no TCP address for port 0');
  return address.port;
}

/** Creates a temporary directory named after `prefix`. */
export function makeTempDir(prefix: string): Promise<string> {
  return mkdtemp(join(tmpdir(), `${prefix}-`));
}

/**
 * Writes a fast-firing copy of a rules file into `dir`: the same groups, names, expressions,
 * labels and annotations, with every alerting rule's `for` set to `forDuration`.
 *
 * @param sourcePath - a Prometheus rules file (default: the shipped `vllm-rules.yml`)
 * @param forDuration - a Prometheus duration, default `'0s'` (fire on the first true evaluation)
 * @returns the path of the copy
 * @see https://prometheus.io/docs/prometheus/latest/configuration/alerting_rules/
 */
export async function writeFastRules(
  dir: string,
  sourcePath: string = SHIPPED.rules,
  forDuration = '0s',
): Promise<string> {
  const doc = parse(await readFile(sourcePath, 'utf8')) as { groups: { rules: Record<string, unknown>[] }[] };
  for (const group of doc.groups) {
    for (const rule of group.rules) if ('alert' in rule) rule.for = forDuration;
  }
  const target = join(dir, `fast-${basename(sourcePath)}`);
  await writeFile(target, stringify(doc));
  return target;
}

/**
 * Calls `probe` every `intervalMs` (default 250 ms) until it returns something other than
 * `undefined`, and returns that. For eventually-true conditions across real processes:
 * it bounds the wait without asserting how long anything took. A probe that throws ends
 * the wait with its error.
 *
 * @param describe - called on timeout for the failure message (e.g. the last response, process output)
 * @throws Error after `deadlineMs` (default 40 s), with `describe()`'s text
 */
export async function pollUntil<T>(
  probe: () => Promise<T | undefined>,
  describe: () => string,
  { deadlineMs = 40_000, intervalMs = 250 } = {},
): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${deadlineMs} ms: ${describe()}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Resolves once `GET readyUrl` answers 2xx; throws (with stderr) if the process exits first or after 20 s. */
async function waitReady(child: ChildProcess, readyUrl: string, output: () => string): Promise<void> {
  await pollUntil(
    async () => {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`exited (${child.exitCode ?? child.signalCode}) before ready:\n${output()}`);
      }
      return (
        (await fetch(readyUrl, { signal: AbortSignal.timeout(1000) }).then(
          (r) => r.ok,
          () => false,
        )) || undefined
      );
    },
    () => `${readyUrl} not ready:\n${output()}`,
    { deadlineMs: READY_TIMEOUT_MS, intervalMs: 100 },
  );
}

async function terminate(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((ok) => child.once('exit', () => ok()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
  await exited;
  clearTimeout(timer);
}

/**
 * Spawns `binary` with the listen-address flag for a free port and waits for `/-/ready`.
 * Retries on another port when the chosen one was taken meanwhile.
 *
 * @throws Error with the process's stderr when it exits early or is not ready in 20 s
 */
async function launch(binary: string, args: string[], dir: string, fixedPort?: number): Promise<RunningProcess> {
  installExitHook();
  for (let attempt = 1; ; attempt++) {
    const port = fixedPort ?? (await freePort());
    const child = spawn(binary, [...args, `--web.listen-address=127.0.0.1:${port}`], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    live.set(child, dir);
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-MAX_OUTPUT_CHARS);
    });
    const output = () => stderr;
    const url = `http://127.0.0.1:${port}`;
    const stop = async () => {
      await terminate(child);
      live.delete(child);
      await rm(dir, { recursive: true, force: true });
    };
    try {
      await waitReady(child, `${url}/-/ready`, output);
      return { url, output, stop };
    } catch (error) {
      await terminate(child);
      live.delete(child);
      if (fixedPort === undefined && attempt < PORT_ATTEMPTS && /address already in use/.test(stderr)) continue;
      await rm(dir, { recursive: true, force: true });
      throw new Error(`${basename(binary)}: ${(error as Error).message}`);
    }
  }
}

/** `http://host:port[/path]` or `host:port` → `host:port`. */
function hostPort(target: string): string {
  return target.includes('://') ? new URL(target).host : target;
}

export interface PrometheusOptions {
  /** Targets serving `/metrics`, as `host:port` or base URLs; all scraped in one job. */
  scrapeTargets: string[];
  /** Job name of the scrape config, i.e. the `job` label. Default `vllm`. */
  jobName?: string;
  /** More scrape jobs, each its name and targets (e.g. `llm-alert-pipeline`'s own /metrics). */
  moreJobs?: { jobName: string; targets: string[] }[];
  /** Absolute paths of rule files to load. */
  rulesFiles: string[];
  /** Base URL of the Alertmanager to notify; omitted: alerts stay in Prometheus. */
  alertmanagerUrl?: string;
  /** More Alertmanagers to notify (the peers of an HA cluster: Prometheus sends every alert to each). */
  alertmanagerUrls?: string[];
  /** Prometheus durations, default `'1s'` each. */
  evaluationInterval?: string;
  scrapeInterval?: string;
}

/**
 * Starts Prometheus on a free loopback port with a generated config and its own TSDB
 * in a temporary directory. Alerts are re-sent to Alertmanager on every evaluation
 * (`--rules.alert.resend-delay` = the evaluation interval) so resolution shows quickly.
 *
 * @returns base URL of its HTTP API and `stop()`
 * @throws Error (with stderr) when the binary is missing, exits or is not ready in 20 s
 * @see https://prometheus.io/docs/prometheus/latest/configuration/configuration/
 */
export async function startPrometheus(options: PrometheusOptions): Promise<RunningProcess> {
  const binary = findBinary('prometheus');
  const evaluationInterval = options.evaluationInterval ?? '1s';
  const dir = await makeTempDir('prometheus');
  const alertmanagers = [
    ...(options.alertmanagerUrl ? [options.alertmanagerUrl] : []),
    ...(options.alertmanagerUrls ?? []),
  ];
  const config = {
    global: { scrape_interval: options.scrapeInterval ?? '1s', evaluation_interval: evaluationInterval },
    rule_files: options.rulesFiles,
    ...(alertmanagers.length && {
      alerting: { alertmanagers: [{ static_configs: [{ targets: alertmanagers.map(hostPort) }] }] },
    }),
    scrape_configs: [
      { job_name: options.jobName ?? 'vllm', static_configs: [{ targets: options.scrapeTargets.map(hostPort) }] },
      ...(options.moreJobs ?? []).map((j) => ({
        job_name: j.jobName,
        static_configs: [{ targets: j.targets.map(hostPort) }],
      })),
    ],
  };
  const configFile = join(dir, 'prometheus.yml');
  await writeFile(configFile, stringify(config));
  return launch(
    binary,
    [
      `--config.file=${configFile}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--rules.alert.resend-delay=${evaluationInterval}`,
    ],
    dir,
  );
}

export interface AlertmanagerOptions {
  /** Where the `llm-alert-pipeline` receiver posts (replaces the example's URL). */
  webhookUrl: string;
  /** Sent as `Authorization: Bearer <token>` via `credentials_file`; omitted: no authorization. */
  bearerToken?: string;
  /** Alertmanager durations for the route and every child route that sets its own; defaults `'1s'`, `'1s'`, `'1h'`. */
  groupWait?: string;
  groupInterval?: string;
  repeatInterval?: string;
  /** Inhibit rules added after the example's own (Alertmanager's `inhibit_rules` entries). */
  inhibitRules?: Record<string, unknown>[];
  /** Where the ops receiver (the pipeline's own alerts) posts, written to its `api_url_file`. */
  opsSlackUrl?: string;
  /** Listen on this loopback port (to restart an Alertmanager under the same `externalURL`); default: a free one. */
  port?: number;
  /**
   * Join an HA cluster (gossip on loopback): listen for gossip on `port`, join the peers on
   * `peerPorts`. Short gossip and peer timeouts so that a passive peer hears of a notification
   * before its own turn (`--cluster.peer-timeout`, 1 s per position). Omitted: gossip disabled.
   */
  cluster?: { port: number; peerPorts: number[] };
}

/** Alertmanager's gossip flags for `cluster`, or the flag that turns gossip off. */
function clusterArgs(cluster: AlertmanagerOptions['cluster']): string[] {
  if (!cluster) return ['--cluster.listen-address='];
  return [
    `--cluster.listen-address=127.0.0.1:${cluster.port}`,
    ...cluster.peerPorts.map((p) => `--cluster.peer=127.0.0.1:${p}`),
    '--cluster.peer-timeout=1s',
    '--cluster.gossip-interval=100ms',
    '--cluster.pushpull-interval=1s',
    '--cluster.reconnect-interval=1s',
  ];
}

export interface Route {
  routes?: Route[];
  [timing: string]: unknown;
}

/** Sets the test timings on `route` and on each child route that has its own (the heartbeat route does). */
function setTimings(route: Route, timings: Record<string, string>, root = true): void {
  for (const [key, value] of Object.entries(timings)) if (root || key in route) route[key] = value;
  for (const child of route.routes ?? []) setTimings(child, timings, false);
}

interface AlertmanagerExample {
  route: Route;
  inhibit_rules?: Record<string, unknown>[];
  receivers: {
    name: string;
    webhook_configs?: { url: string; http_config?: { authorization?: Record<string, unknown> } }[];
    slack_configs?: { api_url_file: string }[];
  }[];
}

/**
 * Starts Alertmanager with the shipped `alertmanager.example.yml` (route, grouping, receivers,
 * inhibition), changing only the webhook URL, the token file, the ops receiver's URL file and the
 * routes' timings, and adding any `inhibitRules` given.
 * Gossip is disabled (`--cluster.listen-address=`) unless `cluster` is given.
 *
 * @returns base URL of its HTTP API (e.g. `GET {url}/api/v2/alerts`) and `stop()`
 * @throws Error (with stderr) when the binary is missing, exits or is not ready in 20 s
 * @see https://prometheus.io/docs/alerting/latest/configuration/#webhook_config
 */
export async function startAlertmanager(options: AlertmanagerOptions): Promise<RunningAlertmanager> {
  const binary = findBinary('alertmanager');
  const dir = await makeTempDir('alertmanager');
  const config = parse(await readFile(SHIPPED.alertmanagerConfig, 'utf8')) as AlertmanagerExample;
  setTimings(config.route, {
    group_wait: options.groupWait ?? '1s',
    group_interval: options.groupInterval ?? '1s',
    repeat_interval: options.repeatInterval ?? '1h',
  });
  const webhook = config.receivers[0]?.webhook_configs?.[0];
  if (!webhook) throw new Error(`${SHIPPED.alertmanagerConfig}: no webhook_configs in the first receiver`);
  webhook.url = options.webhookUrl;
  if (options.bearerToken === undefined) {
    delete webhook.http_config;
  } else {
    const tokenFile = join(dir, 'webhook.token');
    await writeFile(tokenFile, options.bearerToken, { mode: 0o600 });
    webhook.http_config = { authorization: { type: 'Bearer', credentials_file: tokenFile } };
  }
  if (options.inhibitRules) config.inhibit_rules = [...(config.inhibit_rules ?? []), ...options.inhibitRules];
  const ops = config.receivers.find((r) => r.name === 'llm-alert-pipeline-ops')?.slack_configs?.[0];
  if (ops) {
    ops.api_url_file = join(dir, 'ops-slack-webhook-url');
    await writeFile(ops.api_url_file, options.opsSlackUrl ?? 'http://127.0.0.1:9/ops-receiver-not-set', {
      mode: 0o600,
    });
  }
  const configFile = join(dir, 'alertmanager.yml');
  await writeFile(configFile, stringify(config));
  const running = await launch(
    binary,
    [`--config.file=${configFile}`, `--storage.path=${join(dir, 'data')}`, ...clusterArgs(options.cluster)],
    dir,
    options.port,
  );
  const reload = async (change: (route: Route) => void) => {
    change(config.route);
    await writeFile(configFile, stringify(config));
    const res = await fetch(`${running.url}/-/reload`, { method: 'POST', signal: AbortSignal.timeout(10_000) });
    if (!res.ok) throw new Error(`alertmanager reload: HTTP ${res.status}: ${await res.text()}`);
  };
  return { ...running, reload };
}

/** A running Alertmanager whose configuration can be changed. */
export interface RunningAlertmanager extends RunningProcess {
  /**
   * Changes the top-level route (e.g. its `group_by`), writes the file and reloads it as an operator does
   * (`POST /-/reload`); Alertmanager regroups every alert it holds under the new route.
   * @throws Error when Alertmanager refuses the new configuration
   */
  reload(change: (route: Route) => void): Promise<void>;
}
