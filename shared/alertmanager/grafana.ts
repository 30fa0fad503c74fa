/**
 * What Grafana-managed alerting adds to Alertmanager's webhook body. Grafana's alerting runs an embedded
 * Alertmanager; its *webhook* contact point posts that Alertmanager's message with `"version": "1"` and its
 * own fields, mirrored here field by field (`schema.ts` composes them with Alertmanager's):
 * - per alert (`ExtendedAlert`): `silenceURL` (Grafana's own silence form: the alert lives in Grafana's
 *   Alertmanager, not in `ALERTMANAGER_URL`'s), `dashboardURL`, `panelURL` (empty when the rule links none),
 *   `values` (the numeric results of the rule's expressions by ref ID, `null` when none), `valueString`
 *   (the same as text; the only value of the *Test* button's alert), `imageURL` (a panel screenshot, when
 *   Grafana uploaded one), `orgId` (Grafana 12+), `ruleUID` (Grafana 12.4+); `embeddedImage` is never set
 *   by the webhook contact point and is not kept;
 * - per message: `orgId`, `title` and `message` (Grafana's default templates rendered: we render our own),
 *   `state` (`alerting` or `ok`), `appVersion` (Grafana 12.4+).
 * Labels and annotations are Alertmanager's, minus Grafana's private `__…__` ones; `alertname` is the
 * rule's title (spaces allowed) and `grafana_folder` its folder.
 * Unknown fields are stripped, as for Alertmanager: newer Grafanas add some.
 * @see https://github.com/grafana/alerting/blob/main/receivers/webhook/webhook.go (`webhookMessage`)
 * @see https://github.com/grafana/alerting/blob/main/templates/template_data.go (`ExtendedAlert`, `extendAlert`)
 * @see https://grafana.com/docs/grafana/latest/alerting/configure-notifications/manage-contact-points/integrations/webhook-notifier/
 */
import * as z from '../core/zod.js';

/** The payload version Grafana's webhook contact point sends (Alertmanager's is `4`). */
export const GRAFANA_WEBHOOK_VERSION = '1';

const url = z._default(z.string(), '');

/** Grafana's fields of one alert, beside Alertmanager's (`ExtendedAlert`). */
export const grafanaAlertFields = {
  silenceURL: url,
  dashboardURL: url,
  panelURL: url,
  /** Go's `map[string]float64`: `null` when the rule produced no numeric result (the *Test* alert). */
  values: z._default(z.nullable(z.record(z.string(), z.number())), null),
  valueString: z._default(z.string(), ''),
  imageURL: z.optional(z.string()),
  orgId: z.optional(z.number()),
  ruleUID: z.optional(z.string()),
};

/**
 * Grafana's fields of the message, beside Alertmanager's (`webhookMessage`). Every Grafana sends them, so a
 * `version` `1` body without them is not Grafana's (and is refused).
 */
export const grafanaMessageFields = {
  orgId: z.number(),
  title: z.string(),
  state: z.string(),
  message: z.string(),
  appVersion: z.optional(z.string()),
};

/** Grafana's fields of one alert, as parsed. */
export type GrafanaAlertFields = z.infer<z.ZodMiniObject<typeof grafanaAlertFields>>;
/** Grafana's fields of the message, as parsed. */
export type GrafanaMessageFields = z.infer<z.ZodMiniObject<typeof grafanaMessageFields>>;

/**
 * Whether Grafana sent the alert (it carries Grafana's fields: the parser gives every Grafana alert a
 * `valueString`, empty or not; an Alertmanager alert has none). Such an alert is in Grafana's own
 * Alertmanager: `ALERTMANAGER_URL`'s Alertmanager and Prometheus's `ALERTS` know nothing of it, so it is
 * silenced through its `silenceURL` and never asked about there.
 */
export function sentByGrafana(alert: Partial<GrafanaAlertFields>): boolean {
  return typeof alert.valueString === 'string';
}

/** Significant digits of a Grafana value shown (`0.9731`, `63`, `1234570000`). */
const VALUE_DIGITS = 6;

/**
 * Grafana's values of an alert as one line, `B=0.9731 · C=1` (ref IDs in Grafana's order, sorted);
 * the `valueString` when there are none (the *Test* button's alert); `''` when neither says anything.
 */
export function grafanaValuesText(alert: Partial<GrafanaAlertFields>): string {
  const values = Object.entries(alert.values ?? {});
  if (values.length === 0) return alert.valueString?.trim() ?? '';
  return values
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([ref, v]) => `${ref}=${Number.isFinite(v) ? String(Number(v.toPrecision(VALUE_DIGITS))) : String(v)}`)
    .join(' · ');
}
