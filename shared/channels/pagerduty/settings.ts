/**
 * The PagerDuty channel's settings, checked once at start like every other (errors name the setting,
 * never echo the value):
 * - `PAGERDUTY_ROUTING_KEY`: the integration key of an Events API v2 integration; a secret (it may
 *   live in the settings secret); turns on the channel named `pagerduty`.
 * - `PAGERDUTY_EVENTS_URL`: overrides the endpoint of every instance (tests, a proxy); https, or http
 *   to loopback, the rule of every webhook URL.
 * - Routing file: `{ type: pagerduty, routingKey: { secret: SETTING } }` per instance (one per
 *   PagerDuty service), with the shared `digestAbove`/`locale` fields.
 */
import * as z from '../../core/zod.js';
import { Secret } from '../../core/secret.js';
import { optional } from '../../core/settings.js';
import type { Channel } from '../channel.js';
import { envSettings, ifSet } from '../env.js';
import { renderFields, secretRef, webhookUrlSetting, type ChannelType, type InstanceBase } from '../settings.js';
import type { PagerDutyChannelOptions } from './index.js';
import { deferredChannel } from '../deferred.js';
import { lazyAsync } from '../../core/lazy.js';
import { PAGERDUTY_EVENTS_PER_MINUTE, PAGERDUTY_ROUTING_KEY_CHARS } from './wire.js';

/**
 * What is wrong with a routing key, or `undefined`. PagerDuty's keys are 32 characters (a service's
 * integration key; a global ruleset's starts with `R`); a pasted URL, a key with a line break or a
 * REST API token would be refused by PagerDuty with 400 on every alert, so it is refused here first.
 * @see https://developer.pagerduty.com/docs/events-api-v2/trigger-events/ (`routing_key`)
 */
export function routingKeyProblem(value: string): string | undefined {
  if (value.length === PAGERDUTY_ROUTING_KEY_CHARS && /^[A-Za-z0-9]+$/.test(value)) return undefined;
  return `must be the ${PAGERDUTY_ROUTING_KEY_CHARS}-character integration key (routing key) of an Events API v2 integration (letters and digits)`;
}

/** The `PAGERDUTY_ROUTING_KEY` setting's schema. */
const routingKeySchema = z.string().check(
  z.superRefine((s, ctx) => {
    const problem = routingKeyProblem(s);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  }),
);

const schema = z.strictObject({ type: z.literal('pagerduty'), routingKey: secretRef, ...renderFields });
export type PagerDutySpec = z.infer<typeof schema>;
/** `eventsUrl`: the `PAGERDUTY_EVENTS_URL` setting, when set. */
export type PagerDutyInstance = InstanceBase & { type: 'pagerduty'; routingKey: Secret; eventsUrl?: string };

export const pagerduty = {
  schema,
  secretNames: (spec) => [spec.routingKey.secret],
  resolve(name, spec, ctx) {
    const routingKey = ctx.secret(spec.routingKey, 'routingKey', false);
    const problem = routingKey && routingKeyProblem(routingKey.reveal());
    if (problem) ctx.problem('routingKey', `setting ${spec.routingKey.secret} ${problem}`);
    if (!routingKey || problem) return undefined;
    const eventsUrl = ctx.settings.PAGERDUTY_EVENTS_URL || undefined;
    return {
      name,
      type: 'pagerduty',
      routingKey,
      ...(eventsUrl && { eventsUrl }),
      locale: spec.locale,
      digestAbove: spec.digestAbove,
    };
  },
  // The renderer and sender load apart (../deferred.ts): at start when configured, never otherwise.
  create: (c, deps) =>
    pagerDutyChannel({
      name: c.name,
      digestAbove: c.digestAbove,
      routingKey: c.routingKey,
      eventsUrl: c.eventsUrl,
      ...(deps.pagerDutyStorms && { storms: deps.pagerDutyStorms }),
    }),
  env: envSettings({
    variables: { PAGERDUTY_ROUTING_KEY: optional(routingKeySchema), PAGERDUTY_EVENTS_URL: webhookUrlSetting() },
    secrets: ['PAGERDUTY_ROUTING_KEY'],
    read: (v) => ({
      channels: [
        ifSet(
          v.PAGERDUTY_ROUTING_KEY,
          (key): PagerDutyInstance => ({
            name: 'pagerduty',
            type: 'pagerduty',
            routingKey: new Secret(key),
            ...(v.PAGERDUTY_EVENTS_URL && { eventsUrl: v.PAGERDUTY_EVENTS_URL }),
          }),
        ),
      ],
    }),
  }),
} satisfies ChannelType<PagerDutySpec, PagerDutyInstance>;

/** The `pagerduty` channel of `options` (see `./index.ts`), its code loaded apart ({@link deferredChannel}). */
export function pagerDutyChannel(options: PagerDutyChannelOptions): Channel {
  const load = lazyAsync(async () => (await import('./index.js')).createPagerDutyChannel(options));
  const channel = deferredChannel(options.name ?? 'pagerduty', load);
  return {
    ...channel,
    eventsPerMinute: PAGERDUTY_EVENTS_PER_MINUTE,
    ackEventKeys: async (records) => (await load()).ackEventKeys!(records),
  };
}
