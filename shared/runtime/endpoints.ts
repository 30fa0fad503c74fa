/**
 * Prometheus and Alertmanager as the configuration names them: each URL with the credentials its
 * requests carry, paired here once so that no caller can take the URL without them.
 */
import type { Endpoint } from '../core/endpoint.js';
import type { Config } from './config.js';

/** `PROMETHEUS_URL` with `PROMETHEUS_BEARER_TOKEN`…; `undefined` when unset. */
export function prometheusEndpoint(
  config: Pick<Config, 'prometheusUrl' | 'prometheusCredentials'>,
): Endpoint | undefined {
  return config.prometheusUrl ? { url: config.prometheusUrl, credentials: config.prometheusCredentials } : undefined;
}

/** `ALERTMANAGER_URL` with `ALERTMANAGER_BEARER_TOKEN`…; `undefined` when unset. */
export function alertmanagerEndpoint(
  config: Pick<Config, 'alertmanagerUrl' | 'alertmanagerCredentials'>,
): Endpoint | undefined {
  return config.alertmanagerUrl
    ? { url: config.alertmanagerUrl, credentials: config.alertmanagerCredentials }
    : undefined;
}
