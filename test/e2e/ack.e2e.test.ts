/**
 * Acknowledging from a real message in a real browser, with real parts only:
 * alerts posted to the real Alertmanager (as Prometheus does) ─webhook─▶ `npm start`'s entry (child
 * process, embedded dynalite, PUBLIC_URL and ACK_SECRET set) ─▶ loopback Slack; headless Debian
 * Chromium (driven by playwright-core, no downloaded browser) opens the Acknowledge button's URL from
 * the Slack message, sees the page and clicks. Asserts the stored state (audit route), the follow-up
 * message, the reminder Alertmanager resends being suppressed, the resolved message naming who acked,
 * a silence created in Alertmanager from the page, link unfurlers acknowledging nothing, and an
 * unacknowledged critical alert escalating. Waits are bounded polls, never timings.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  pushAlerts,
  startAlertmanagerAndPipeline,
  type AlertmanagerAndPipeline,
} from '../helpers/alertmanager-pipeline.js';
import { launchChromium, type HeadlessChromium } from '../helpers/chromium.js';
import type { PipelineProcess } from '../helpers/pipeline-process.js';
import { startLoopback, type Loopback } from '../helpers/loopback.js';
import { pollUntil, type RunningProcess } from '../helpers/processes.js';

const TOKEN = 'e2e-ack-token-0123456789abcdef';
const STEP_TIMEOUT_MS = 60_000;
const POLL = { deadlineMs: 45_000, intervalMs: 200 };

interface SlackBody {
  text: string;
  blocks: { type: string; text?: { text: string }; elements?: { url?: string }[] }[];
}

let slack: Loopback;
let escalation: Loopback;
let stack: AlertmanagerAndPipeline;
let alertmanager: RunningProcess;
let pipeline: PipelineProcess;
let browser: HeadlessChromium;
const pageErrors: string[] = [];

/** Posts alerts to Alertmanager's API v2 as Prometheus does; `resolved` sets `endsAt` to now. */
async function pushAlert(labels: Record<string, string>, summary: string, resolved = false): Promise<void> {
  await pushAlerts(alertmanager.url, [
    {
      labels,
      annotations: { summary },
      generatorURL: 'http://prometheus.invalid/graph',
      ...(resolved && { endsAt: new Date().toISOString() }),
    },
  ]);
}

const bodies = (lb: Loopback): SlackBody[] => lb.requests.map((r) => JSON.parse(r.body.toString('utf8')) as SlackBody);
const headerOf = (b: SlackBody) => b.blocks.find((x) => x.type === 'header')?.text?.text ?? '';
const context = () =>
  `slack headers: ${JSON.stringify(bodies(slack).map(headerOf))}\nescalation: ${escalation.requests.length}\npipeline:\n${pipeline.out().slice(-3000)}\nalertmanager:\n${alertmanager.output().slice(-1500)}`;

/** The first firing Slack message about `model`, and its Acknowledge button's URL. */
async function firingMessageAbout(model: string): Promise<{ body: SlackBody; ackUrl: string }> {
  return pollUntil(
    async () => {
      const body = bodies(slack).find((b) => /^🔥 FIRING/.test(headerOf(b)) && JSON.stringify(b).includes(model));
      const ackUrl = body?.blocks.find((b) => b.type === 'actions')?.elements?.[0]?.url;
      return body && ackUrl ? { body, ackUrl } : undefined;
    },
    context,
    POLL,
  );
}

/** The alert's fingerprint from its dedupe line (npm start writes info lines in batches, up to 50 ms late: polled). */
async function fingerprintOf(alertname: string, model: string): Promise<string> {
  const line = await pollUntil(
    async () =>
      pipeline.logs.find(
        (l) => l.event === 'alert deduped' && l.alertname === alertname && JSON.stringify(l).includes(model),
      ),
    context,
    POLL,
  );
  return line.fingerprint as string;
}

async function audit(fingerprint: string): Promise<{
  record: { status: string; acknowledgement?: { by: string; channel: string; silenceId?: string } };
  history: { type: string }[];
}> {
  const res = await fetch(`${pipeline.url}/v1/alerts/${fingerprint}`, {
    headers: { authorization: `Bearer ${TOKEN}` },
    signal: AbortSignal.timeout(5000),
  });
  expect(res.status).toBe(200);
  return res.json() as never;
}

beforeAll(async () => {
  [slack, escalation] = await Promise.all([startLoopback(), startLoopback()]);
  stack = await startAlertmanagerAndPipeline(
    ({ port, alertmanager }) => ({
      WEBHOOK_TOKEN: TOKEN,
      SLACK_WEBHOOK_URL: `${slack.url}/services/T000/B000/ack-e2e`,
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      ACK_SECRET: 'e2e-ack-secret-0123456789abcdefghij',
      ALERTMANAGER_URL: alertmanager.url,
      ESCALATION_SLACK_WEBHOOK_URL: `${escalation.url}/services/T000/B000/escalation`,
      ESCALATION_DELAY_SECONDS: '3',
    }),
    { alertmanager: { bearerToken: TOKEN, repeatInterval: '2s' } },
  );
  ({ alertmanager, pipeline } = stack);
  browser = await launchChromium('ack-e2e');
}, 120_000);

afterAll(async () => {
  // The browser first: its keep-alive connections would hold the server's graceful close.
  await browser?.close();
  await stack?.stop();
  await Promise.allSettled([slack?.close(), escalation?.close()]);
});

const queueA = {
  alertname: 'VLLMQueueBacklog',
  severity: 'warning',
  kind: 'queue',
  model_name: 'ack-model-a',
  job: 'vllm',
};
const queueB = { ...queueA, model_name: 'ack-model-b' };
const kvC = {
  alertname: 'VLLMKVCacheNearlyFull',
  severity: 'critical',
  kind: 'cache',
  model_name: 'ack-model-c',
  job: 'vllm',
};

describe('acknowledging from a Slack message in a real browser', () => {
  it(
    'opens the link, clicks Acknowledge, and the channel hears who acked',
    async () => {
      await pushAlert(queueA, 'ack-model-a: requests waiting');
      const { ackUrl } = await firingMessageAbout('ack-model-a');
      expect(ackUrl.startsWith(`${pipeline.url}/v1/ack/`)).toBe(true);

      const page = await browser.newPage();
      page.on('console', (m) => void (m.type() === 'error' && pageErrors.push(m.text())));
      const response = await page.goto(ackUrl);
      expect(response?.status()).toBe(200);
      expect(await page.title()).toBe('Acknowledge: VLLMQueueBacklog');
      await expect(page.textContent('main')).resolves.toContain('ack-model-a: requests waiting');
      await expect(page.textContent('main')).resolves.toContain('Not acknowledged yet.');
      await page.fill('input[name="name"]', 'alice');
      await Promise.all([page.waitForNavigation(), page.click('button[value="ack"]')]);
      const after = (await page.textContent('main')) ?? '';
      expect(after).toMatch(/acknowledged/);
      expect(after).toMatch(/Acknowledged by alice at .* from the slack link/);
      await page.close();
      expect(pageErrors).toEqual([]);

      const fp = await fingerprintOf('VLLMQueueBacklog', 'ack-model-a');
      const state = await audit(fp);
      expect(state.record.acknowledgement).toMatchObject({ by: 'alice', channel: 'slack' });
      expect(state.history.map((e) => e.type)).toEqual(['notified', 'acknowledged', 'follow-up']);
      const followUps = bodies(slack).filter((b) => /^👀 ACKNOWLEDGED/.test(headerOf(b)));
      expect(followUps).toHaveLength(1);
      expect(JSON.stringify(followUps[0])).toContain('Acknowledged by *alice*');
      expect(followUps[0]!.blocks.some((b) => b.type === 'actions')).toBe(false);
    },
    STEP_TIMEOUT_MS,
  );

  it(
    'suppresses the reminders Alertmanager resends, and remembers the name',
    async () => {
      const fp = await fingerprintOf('VLLMQueueBacklog', 'ack-model-a');
      const count = slack.requests.length;
      // repeat_interval is 2 s: wait until the pipeline has seen two more resends of this alert.
      const seen = pipeline.logs.filter((l) => l.event === 'alert deduped' && l.fingerprint === fp).length;
      await pollUntil(
        async () =>
          pipeline.logs.filter((l) => l.event === 'alert deduped' && l.fingerprint === fp).length >= seen + 2
            ? true
            : undefined,
        context,
        POLL,
      );
      const decisions = pipeline.logs
        .filter((l) => l.event === 'alert deduped' && l.fingerprint === fp && l.status === 'firing')
        .map((l) => l.decision);
      expect(decisions.slice(1).every((d) => d === 'already notified')).toBe(true);
      expect(slack.requests.length).toBe(count);

      await pushAlert(queueB, 'ack-model-b: requests waiting');
      const { ackUrl } = await firingMessageAbout('ack-model-b');
      const page = await browser.newPage();
      await page.goto(ackUrl);
      expect(await page.inputValue('input[name="name"]')).toBe('alice');
      await page.selectOption('select[name="hours"]', '1');
      await Promise.all([page.waitForNavigation(), page.click('button[value="ack-silence"]')]);
      const text = (await page.textContent('main')) ?? '';
      await page.close();
      const silenceId = /silenced \(([0-9a-f-]{36})\)/.exec(text)?.[1];
      expect(silenceId, text).toBeDefined();

      const silences = (await (await fetch(`${alertmanager.url}/api/v2/silences`)).json()) as {
        id: string;
        createdBy: string;
        status: { state: string };
        matchers: { name: string; value: string; isEqual: boolean }[];
      }[];
      const silence = silences.find((s) => s.id === silenceId)!;
      expect(silence).toMatchObject({ createdBy: 'alice', status: { state: 'active' } });
      expect(silence.matchers).toContainEqual(
        expect.objectContaining({ name: 'model_name', value: 'ack-model-b', isEqual: true }),
      );
      // Alertmanager itself now reports the alert silenced by it.
      await pollUntil(
        async () => {
          const alerts = (await (
            await fetch(`${alertmanager.url}/api/v2/alerts?silenced=true&filter=model_name%3D%22ack-model-b%22`)
          ).json()) as { status: { silencedBy: string[] } }[];
          return alerts[0]?.status.silencedBy.includes(silenceId!) ? true : undefined;
        },
        context,
        POLL,
      );
      expect(
        (await audit(await fingerprintOf('VLLMQueueBacklog', 'ack-model-b'))).record.acknowledgement?.silenceId,
      ).toBe(silenceId);
    },
    STEP_TIMEOUT_MS,
  );

  it(
    'says who acked and how long it took when the alert resolves',
    async () => {
      await pushAlert(queueA, 'ack-model-a: requests waiting', true);
      const resolved = await pollUntil(
        async () =>
          bodies(slack).find((b) => /RESOLVED/.test(headerOf(b)) && JSON.stringify(b).includes('ack-model-a')),
        context,
        POLL,
      );
      expect(JSON.stringify(resolved)).toMatch(/Acknowledged by \*alice\* at [^(]+ UTC \(\d+ s after it fired\)/);
      expect(resolved.blocks.some((b) => b.type === 'actions')).toBe(false);
    },
    STEP_TIMEOUT_MS,
  );

  it(
    "lets link unfurlers fetch an unacknowledged critical alert's link, acknowledging nothing; it escalates",
    async () => {
      await pushAlert(kvC, 'KV cache 97% full on ack-model-c');
      const { ackUrl } = await firingMessageAbout('ack-model-c');
      for (const agent of [
        'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)',
        'Mozilla/5.0 (compatible; Google-Safety; +http://www.google.com/bot.html)',
        'Microsoft Office Existence Discovery',
      ]) {
        const res = await fetch(ackUrl, { headers: { 'user-agent': agent }, signal: AbortSignal.timeout(5000) });
        expect(res.status).toBe(200);
      }
      const escalated = await pollUntil(async () => bodies(escalation)[0], context, POLL);
      expect(headerOf(escalated)).toBe('🚨 UNACKNOWLEDGED · critical · VLLMKVCacheNearlyFull (1)');
      expect(escalated.blocks.some((b) => b.type === 'actions')).toBe(true);
      const state = await audit(await fingerprintOf('VLLMKVCacheNearlyFull', 'ack-model-c'));
      expect(state.record.acknowledgement).toBeUndefined();
      expect(state.history.map((e) => e.type)).toEqual(['notified', 'escalation scheduled', 'escalated']);
      expect(escalation.requests).toHaveLength(1);
    },
    STEP_TIMEOUT_MS,
  );
});
