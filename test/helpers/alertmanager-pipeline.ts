/**
 * The set-up the end-to-end tests share: the real Alertmanager (the shipped example) posting to
 * `npm start`'s entry on a loopback port, and alerts handed to that Alertmanager as Prometheus hands
 * them (`POST /api/v2/alerts`). Missing binaries fail the suite (`requireBinaries`); it never skips.
 */
import { expect } from 'vitest';
import { requireBinaries } from './binaries.js';
import { startPipelineProcess, type PipelineProcess } from './pipeline-process.js';
import { freePort, startAlertmanager, type AlertmanagerOptions, type RunningAlertmanager } from './processes.js';

/** Alertmanager and the pipeline it posts to, running. */
export interface AlertmanagerAndPipeline {
  alertmanager: RunningAlertmanager;
  pipeline: PipelineProcess;
  /** The pipeline's loopback port. */
  port: number;
  /** Stops both (each once; a failure of one does not keep the other running). */
  stop(): Promise<void>;
}

/** What the pipeline's settings may depend on: its own port and the Alertmanager posting to it. */
export interface StartedSoFar {
  port: number;
  alertmanager: RunningAlertmanager;
}

export interface AlertmanagerAndPipelineOptions {
  /** Alertmanager's options beyond where it posts (its timings default to 1 s, 1 s, 1 h). */
  alertmanager?: Omit<AlertmanagerOptions, 'webhookUrl'>;
  /**
   * Where Alertmanager posts, given the pipeline's port (e.g. a relay in front of it); default its
   * `/v1/alertmanager` on that port.
   */
  webhookUrl?: (port: number) => string | Promise<string>;
}

/**
 * Starts Alertmanager, then the pipeline on the port Alertmanager posts to.
 * @param env the pipeline's settings beyond `PORT` and `HOST`, given its port and the running Alertmanager
 *   (start here what needs Alertmanager and the pipeline needs in turn, e.g. a Prometheus sending to it)
 */
export async function startAlertmanagerAndPipeline(
  env: (started: StartedSoFar) => Record<string, string> | Promise<Record<string, string>>,
  options: AlertmanagerAndPipelineOptions = {},
): Promise<AlertmanagerAndPipeline> {
  requireBinaries();
  const port = await freePort();
  const webhookUrl = options.webhookUrl ? await options.webhookUrl(port) : `http://127.0.0.1:${port}/v1/alertmanager`;
  const alertmanager = await startAlertmanager({ ...options.alertmanager, webhookUrl });
  let pipeline: PipelineProcess;
  try {
    pipeline = await startPipelineProcess({
      PORT: String(port),
      HOST: '127.0.0.1',
      ...(await env({ port, alertmanager })),
    });
  } catch (err) {
    await alertmanager.stop();
    throw err;
  }
  const stop = async () => void (await Promise.allSettled([alertmanager.stop(), pipeline.stop()]));
  return { alertmanager, pipeline, port, stop };
}

/** An alert as Prometheus posts it to Alertmanager's API v2 (`postableAlert`). */
export interface PostableAlert {
  labels: Record<string, string>;
  annotations?: Record<string, string>;
  generatorURL?: string;
  /** RFC 3339; default: when Alertmanager receives it. */
  startsAt?: string;
  /** RFC 3339; a past one resolves the alert. */
  endsAt?: string;
}

/** Hands `alerts` to Alertmanager as Prometheus does, and expects it to take them (HTTP 200). */
export async function pushAlerts(alertmanagerUrl: string, alerts: PostableAlert[]): Promise<void> {
  const res = await fetch(`${alertmanagerUrl}/api/v2/alerts`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(alerts),
    signal: AbortSignal.timeout(5000),
  });
  expect(res.status, await res.clone().text()).toBe(200);
}
