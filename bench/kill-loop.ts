/**
 * Kill-loop benchmark: how often a crash duplicates a message. Runs `npm start`'s entry against
 * loopback Slack, Feishu and SNS stand-ins and a dynalite that outlives it, SIGKILLs it at a random
 * point (after a random number of channel requests, plus up to 60 ms) once per alert, with Alertmanager-style
 * retries re-posting every alert not yet answered 200, then lets one process finish them all
 * (`test/helpers/kill-loop.ts`). Prints messages per channel, duplicates and the duplicate rate.
 *
 * Run alone: `npx tsx bench/kill-loop.ts [kills=50]`.
 */
import { runKillLoop } from '../test/helpers/kill-loop.js';

const kills = Number(process.argv[2] ?? 50);
const started = Date.now();
const result = await runKillLoop({ kills, progress: (line) => process.stderr.write(`${line}\n`) });
const deliveries = result.alerts * 3;
const duplicates = result.duplicates.slack + result.duplicates.feishu + result.duplicates.sns;
const missing = result.missing.slack + result.missing.feishu + result.missing.sns;
console.log(
  JSON.stringify(
    {
      kills: result.kills,
      alerts: result.alerts,
      posts: result.posts,
      duplicates: result.duplicates,
      mostCopiesOfOneMessage: Math.max(...Object.values(result.received).flat()),
      missing: result.missing,
      duplicateRate: `${duplicates}/${deliveries} = ${((100 * duplicates) / deliveries).toFixed(1)}% of (alert, channel) deliveries`,
      lost: missing,
      seconds: Math.round((Date.now() - started) / 1000),
    },
    null,
    2,
  ),
);
