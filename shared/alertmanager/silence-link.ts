/**
 * The link to Alertmanager's "new silence" form, pre-filled with an alert's labels. The form reads
 * its `filter` parameter with the UI's own parser (`ui/app/src/Utils/Filter.elm`), not with the
 * matcher grammar of the configuration: `{name="value",…}` where a name is any run of characters
 * that are not reserved (Alertmanager 0.32+; before, `[a-zA-Z0-9_]` only) and a value is a JSON
 * string. A single matcher it cannot read empties the whole form, so values are JSON-encoded
 * (newlines, tabs and control characters included) and labels whose names hold a reserved character
 * are left out: the form then shows every other label, and the person silencing sees what is missing.
 * Names are never quoted (`"service.name"="x"`, the configuration's UTF-8 syntax): `"` is reserved in the
 * form's filter, and one quoted name empties the whole form in every version of the UI (seen in Chromium
 * with the UI of Alertmanager 0.32 and of 0.31: `service.name="x"` fills the 0.32 form, a quoted name
 * fills neither; a UI before 0.32 reads no name with a dot at all).
 * @see https://github.com/prometheus/alertmanager/blob/main/ui/app/src/Utils/Filter.elm
 */
import { trimTrailing } from '../core/trim.js';

/**
 * Characters the UI's filter never accepts in a label name: Go's white space and `{ } ! = ~ , \ " ' \``;
 * and a lone UTF-16 surrogate, which no URL can carry (`encodeURIComponent` throws on it).
 */
const RESERVED_IN_NAME = /[\p{White_Space}\p{Cs}{}!=~,\\"'`]/u;

/**
 * Link to Alertmanager's "new silence" form with an equality matcher for every label of the alert
 * that the form can show, `alertname` first then by name, e.g. `{alertname="X",model_name="y"}`
 * (URL-encoded).
 * @param externalURL Alertmanager's base URL (a trailing slash is ignored)
 * @param labels the alert's (or a group's common) labels
 * @example silenceUrl('http://am:9093', { alertname: 'X' }) // 'http://am:9093/#/silences/new?filter=%7Balertname%3D%22X%22%7D'
 */
export function silenceUrl(externalURL: string, labels: Readonly<Record<string, string>>): string {
  const names = Object.keys(labels)
    .filter((name) => name !== '' && !RESERVED_IN_NAME.test(name))
    .sort((a, b) => (a === 'alertname' ? -1 : b === 'alertname' ? 1 : a < b ? -1 : a > b ? 1 : 0));
  const matchers = names.map((name) => `${name}=${JSON.stringify(labels[name] ?? '')}`);
  return `${trimTrailing(externalURL, '/')}/#/silences/new?filter=${encodeURIComponent(`{${matchers.join(',')}}`)}`;
}
