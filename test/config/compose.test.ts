/**
 * `compose.yaml` wired to the shipped configs it mounts, so neither can drift from the other: the
 * service names and ports the configs address, the receiver URL and its bearer token (the same
 * `.env` value the pipeline checks), the ops receiver's secret, the rule files Prometheus loads,
 * Grafana's provisioning of the dashboard and its data source, and the pipeline's data volume.
 * Every mounted file exists; promtool and amtool accept the configs as mounted.
 */
import { existsSync, readFileSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, posix } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { findBinary, runBinary } from '../helpers/binaries.js';
import { REPO_ROOT } from '../helpers/image.js';

interface Service {
  image?: string;
  build?: string;
  command?: string[];
  ports?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  secrets?: { source: string; target: string }[];
  stop_grace_period?: string;
}
interface Compose {
  services: Record<string, Service>;
  volumes: Record<string, unknown>;
  secrets: Record<string, { environment?: string; file?: string }>;
}

const compose = parse(readFileSync(join(REPO_ROOT, 'compose.yaml'), 'utf8')) as Compose;
const service = (name: string) => compose.services[name]!;

/** A service's bind mounts of repository files: container path → repository path. */
function fileMounts(name: string): Map<string, string> {
  const mounts = new Map<string, string>();
  for (const volume of service(name).volumes ?? []) {
    const [source, target] = volume.split(':');
    if (source!.startsWith('./')) mounts.set(target!, source!.slice(2));
  }
  return mounts;
}

/** The repository file mounted at `containerPath`, parsed. */
function mounted<T>(name: string, containerPath: string): T {
  const source = fileMounts(name).get(containerPath);
  expect(source, `${name} mounts ${containerPath}`).toBeDefined();
  return parse(readFileSync(join(REPO_ROOT, source!), 'utf8')) as T;
}

/** The `.env` variable a secret mounted at `target` in `name` holds. */
function secretAt(name: string, target: string): string | undefined {
  const ref = service(name).secrets?.find((s) => s.target === target);
  return ref && compose.secrets[ref.source]?.environment;
}

/** `${VAR…}` → `VAR`. */
const variableOf = (value: string | undefined) => /^\$\{([A-Z_]+)[:?-]/.exec(value ?? '')?.[1];

/** The container port a service publishes first, from `host:container`. */
const containerPort = (name: string) => Number(service(name).ports?.[0]?.split(':')[1]);

interface PrometheusConfig {
  rule_files: string[];
  alerting: { alertmanagers: { static_configs: { targets: string[] }[] }[] };
  scrape_configs: {
    job_name: string;
    authorization?: { credentials_file: string };
    static_configs: { targets: string[] }[];
  }[];
}
interface AlertmanagerConfig {
  route: { receiver: string; routes: { matchers: string[]; receiver: string }[] };
  receivers: {
    name: string;
    webhook_configs?: { url: string; http_config: { authorization: { credentials_file: string } } }[];
    slack_configs?: { api_url_file: string }[];
  }[];
}

describe('compose.yaml', () => {
  it('runs Prometheus, Alertmanager, Grafana and the pipeline, every mounted file from the repository', () => {
    expect(Object.keys(compose.services).sort()).toEqual([
      'alertmanager',
      'grafana',
      'llm-alert-pipeline',
      'prometheus',
    ]);
    for (const name of Object.keys(compose.services))
      for (const source of fileMounts(name).values()) expect(existsSync(join(REPO_ROOT, source)), source).toBe(true);
    expect(service('llm-alert-pipeline').build).toBe('.');
  });

  it("Prometheus's and Alertmanager's links in messages (generatorURL, silences) default to their published ports", () => {
    for (const [name, variable] of [
      ['prometheus', 'PROMETHEUS_EXTERNAL_URL'],
      ['alertmanager', 'ALERTMANAGER_EXTERNAL_URL'],
    ] as const) {
      const flag = service(name).command?.find((c) => c.startsWith('--web.external-url='));
      const published = service(name).ports?.[0]?.split(':')[0];
      expect(flag, name).toBe(`--web.external-url=\${${variable}:-http://localhost:${published}}`);
    }
  });

  it('Alertmanager posts to the pipeline service on its port, with the WEBHOOK_TOKEN the pipeline checks', () => {
    const am = mounted<AlertmanagerConfig>('alertmanager', '/etc/alertmanager/alertmanager.yml');
    expect(service('alertmanager').command).toContain('--config.file=/etc/alertmanager/alertmanager.yml');
    const pipeline = am.receivers.find((r) => r.name === am.route.receiver)!.webhook_configs![0]!;
    const url = new URL(pipeline.url);
    expect(url.hostname).toBe('llm-alert-pipeline');
    expect(Number(url.port)).toBe(containerPort('llm-alert-pipeline'));
    expect(url.pathname).toBe('/v1/alertmanager');
    const tokenVariable = secretAt('alertmanager', pipeline.http_config.authorization.credentials_file);
    expect(tokenVariable).toBe('WEBHOOK_TOKEN');
    expect(variableOf(service('llm-alert-pipeline').environment?.WEBHOOK_TOKEN)).toBe(tokenVariable);
  });

  it("Alertmanager's route for the pipeline's own alerts reaches a receiver whose Slack URL is a mounted secret", () => {
    const am = mounted<AlertmanagerConfig>('alertmanager', '/etc/alertmanager/alertmanager.yml');
    const own = am.route.routes.find((r) => r.matchers.some((m) => m.includes('AlertPipeline')))!;
    const ops = am.receivers.find((r) => r.name === own.receiver)!;
    expect(ops.webhook_configs).toBeUndefined();
    expect(secretAt('alertmanager', ops.slack_configs![0]!.api_url_file)).toBe('OPS_SLACK_WEBHOOK_URL');
  });

  it('Prometheus loads the shipped rule files, alerts the alertmanager service and scrapes the pipeline with its token', () => {
    const config = '/etc/prometheus/prometheus.yml';
    const prom = mounted<PrometheusConfig>('prometheus', config);
    expect(service('prometheus').command).toContain(`--config.file=${config}`);
    const mounts = fileMounts('prometheus');
    expect(prom.rule_files.map((f) => mounts.get(posix.join(dirname(config), f)))).toEqual([
      'infra/prometheus/vllm-rules.yml',
      'infra/prometheus/pipeline-rules.yml',
    ]);
    expect(prom.alerting.alertmanagers[0]!.static_configs[0]!.targets).toEqual([
      `alertmanager:${containerPort('alertmanager')}`,
    ]);
    const job = prom.scrape_configs.find((j) => j.job_name === 'llm-alert-pipeline')!;
    expect(job.static_configs[0]!.targets).toEqual([`llm-alert-pipeline:${containerPort('llm-alert-pipeline')}`]);
    expect(secretAt('prometheus', job.authorization!.credentials_file)).toBe('WEBHOOK_TOKEN');
    expect(prom.scrape_configs.map((j) => j.job_name)).toEqual(expect.arrayContaining(['vllm', 'dcgm']));
  });

  it('Grafana provisions the shipped dashboard from the folder it is mounted in, and Prometheus as its data source', () => {
    const provider = mounted<{ providers: { options: { path: string } }[] }>(
      'grafana',
      '/etc/grafana/provisioning/dashboards/llm-alert-pipeline.yml',
    ).providers[0]!;
    expect(fileMounts('grafana').get(`${provider.options.path}/vllm-fleet.json`)).toBe('infra/grafana/vllm-fleet.json');
    const sources = mounted<{ datasources: { type: string; url: string }[] }>(
      'grafana',
      '/etc/grafana/provisioning/datasources/llm-alert-pipeline.yml',
    ).datasources;
    expect(sources).toEqual([
      expect.objectContaining({ type: 'prometheus', url: `http://prometheus:${containerPort('prometheus')}` }),
    ]);
  });

  it('the pipeline asks those services, keeps its state on its volume, and has time to drain on stop', () => {
    const pipeline = service('llm-alert-pipeline');
    expect(pipeline.environment?.PROMETHEUS_URL).toBe(`http://prometheus:${containerPort('prometheus')}`);
    expect(pipeline.environment?.ALERTMANAGER_URL).toBe(`http://alertmanager:${containerPort('alertmanager')}`);
    const dockerfile = readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8');
    const dataDir = /DATA_DIR=(\S+)/.exec(dockerfile)![1]!;
    expect(pipeline.volumes).toContain(`pipeline-data:${dataDir}`);
    expect(compose.volumes).toHaveProperty('pipeline-data');
    expect(containerPort('llm-alert-pipeline')).toBe(Number(/PORT=(\d+)/.exec(dockerfile)![1]));
    expect(Number.parseInt(pipeline.stop_grace_period!, 10)).toBeGreaterThanOrEqual(30);
  });
});

describe('the configs as compose mounts them', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'compose-configs-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** Copies a service's mounted files to their container paths under `dir`, secrets as placeholder files. */
  async function layOut(name: string): Promise<(path: string) => string> {
    const at = (path: string) => join(dir, name, path);
    for (const [target, source] of fileMounts(name)) {
      await mkdir(dirname(at(target)), { recursive: true });
      await copyFile(join(REPO_ROOT, source), at(target));
    }
    for (const secret of service(name).secrets ?? []) {
      await mkdir(dirname(at(secret.target)), { recursive: true });
      await writeFile(at(secret.target), 'a-test-token-of-32-characters-xx');
    }
    return at;
  }

  /** The file's text with every absolute container path pointed under `dir`. */
  async function rebased(at: (p: string) => string, path: string, paths: string[]): Promise<string> {
    let text = readFileSync(at(path), 'utf8');
    for (const p of paths) text = text.replaceAll(p, at(p));
    await writeFile(at(path), text);
    return at(path);
  }

  it('promtool checks the Prometheus config with its rule files and token', async () => {
    const at = await layOut('prometheus');
    const config = await rebased(at, '/etc/prometheus/prometheus.yml', ['/etc/prometheus/llm-alert-pipeline.token']);
    const result = await runBinary(findBinary('promtool'), ['check', 'config', config]);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toContain('SUCCESS: 2 rule files found');
  });

  it('amtool checks the Alertmanager config with its secrets', async () => {
    const at = await layOut('alertmanager');
    const secrets = (service('alertmanager').secrets ?? []).map((s) => s.target);
    const config = await rebased(at, '/etc/alertmanager/alertmanager.yml', secrets);
    const result = await runBinary(findBinary('amtool'), ['check-config', config]);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toContain('2 receivers');
  });
});
