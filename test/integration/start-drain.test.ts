/**
 * `npm start` stopped with SIGTERM (`docker stop`, systemd) while it delivers a group: the group is
 * delivered and answered 200, then the process exits 0, without waiting out kept-alive connections
 * (Alertmanager's stay open for minutes). The Slack stand-in holds its answer until the process has
 * logged that it is stopping.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { fixtureText } from '../helpers/fixtures.js';
import { startPipelineProcess, type PipelineProcess } from '../helpers/pipeline-process.js';
import { pollUntil } from '../helpers/processes.js';

const POLL = { deadlineMs: 30_000, intervalMs: 50 };
const held: ServerResponse[] = [];
const slack = createServer((req, res) => {
  let body = '';
  req.on('data', (c: Buffer) => (body += c.toString()));
  req.on('end', () => (body.includes('GPUMemoryLeak') ? held.push(res) : res.end('ok')));
});
let pipeline: PipelineProcess | undefined;

afterAll(async () => {
  await pipeline?.kill();
  slack.closeAllConnections();
  slack.close();
});

describe('npm start on SIGTERM', () => {
  it('delivers and answers the group in flight, then exits 0 without waiting for idle connections', async () => {
    await new Promise<void>((ok) => slack.listen(0, '127.0.0.1', ok));
    const p = await startPipelineProcess({
      PORT: '0',
      HOST: '127.0.0.1',
      HEARTBEAT_ALERTNAME: '',
      SLACK_WEBHOOK_URL: `http://127.0.0.1:${(slack.address() as AddressInfo).port}/services/T0/B0/drain`,
    });
    pipeline = p;
    const post = (fixture: 'firing-queue-backlog-two-models' | 'firing-gpu-memory-leak') =>
      fetch(`${p.url}/v1/alertmanager`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: fixtureText(fixture),
      });
    // A delivered group leaves a kept-alive connection behind, idle.
    expect((await post('firing-queue-backlog-two-models')).status).toBe(200);
    const inFlight = post('firing-gpu-memory-leak');
    await pollUntil(async () => (held.length ? true : undefined), p.out, POLL);

    const stopped = p.stop('SIGTERM');
    await pollUntil(async () => p.logs.find((l) => l.event === 'stopping'), p.out, POLL);
    for (const res of held) res.end('ok');
    expect((await inFlight).status).toBe(200);
    await stopped;
    expect(p.exitCode(), p.out()).toBe(0);
    const events = p.logs.map((l) => l.event);
    expect(events.indexOf('channel delivered', events.indexOf('stopping'))).toBeGreaterThan(-1);
    expect(events.at(-1)).toBe('stopped');
  }, 90_000);
});
