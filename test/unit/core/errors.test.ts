import { describe, expect, it } from 'vitest';
import { AckTokenError } from '../../../shared/ack/token.js';
import { AlertStatusError } from '../../../shared/alertmanager/alert-status.js';
import { MatcherSyntaxError } from '../../../shared/alertmanager/matchers/index.js';
import { SilenceError } from '../../../shared/alertmanager/silences.js';
import { ContentRefusedError, DeliveryError } from '../../../shared/channels/channel.js';
import { classifySnsError } from '../../../shared/channels/sns/index.js';
import { PipelineError } from '../../../shared/core/errors.js';
import { EnrichmentUnavailable } from '../../../shared/enrich/enricher.js';
import { PrometheusError } from '../../../shared/prometheus/error.js';
import { RoutingError } from '../../../shared/routing/load.js';
import { ConfigError } from '../../../shared/runtime/config.js';

describe('the error family', () => {
  it.each([
    [new ConfigError(['PORT: must be a port number 0–65535']), 'ConfigError', 'invalid_configuration'],
    [new RoutingError(['routing.yml:1: (file): declares no channel']), 'RoutingError', 'invalid_routing_file'],
    [new PrometheusError('timed out', { errorType: 'timeout' }), 'PrometheusError', 'timeout'],
    [
      new DeliveryError('slack: HTTP 503', { retryable: true, reason: 'server_error' }),
      'DeliveryError',
      'server_error',
    ],
    [new DeliveryError('feishu: code 19001', { retryable: false }), 'DeliveryError', 'platform_error'],
    [new ContentRefusedError('slack: HTTP 400: invalid_blocks'), 'ContentRefusedError', 'content_refused'],
    [new AlertStatusError('Alertmanager answered HTTP 500'), 'AlertStatusError', 'alertmanager_error'],
    [new SilenceError('Alertmanager answered HTTP 500'), 'SilenceError', 'alertmanager_error'],
    [new MatcherSyntaxError('unexpected end'), 'MatcherSyntaxError', 'matcher_syntax'],
    [new AckTokenError('expired', 'This link has expired.'), 'AckTokenError', 'expired'],
    [new EnrichmentUnavailable('no expression', '没有表达式'), 'EnrichmentUnavailable', 'enrichment_unavailable'],
  ])('%s is a PipelineError named %s with reason %s', (err, name, reason) => {
    expect(err).toBeInstanceOf(PipelineError);
    expect(err).toBeInstanceOf(Error);
    expect(err.name).toBe(name);
    expect(err.reason).toBe(reason);
  });

  it('keeps the wrapped error as cause where it carries no secret (an AWS SDK error)', () => {
    const sdk = Object.assign(new Error('Topic does not exist'), {
      name: 'NotFoundException',
      $metadata: { httpStatusCode: 404 },
    });
    const err = classifySnsError(sdk);
    expect(err.reason).toBe('client_error');
    expect(err.cause).toBe(sdk);
  });
});
