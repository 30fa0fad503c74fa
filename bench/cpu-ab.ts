/**
 * CPU per post, A/B: `npm start`'s bundle of two checkouts side by side (same node flags, same loopback
 * world), posts interleaved, each post's CPU read from `/proc/<pid>/stat` (user + system ticks of the
 * product's process, before and after the answer plus a short settle). CPU is less sensitive than wall
 * time to the shared machine's load, so a ~10 % change shows here before the latency rows can. The
 * kernel counts CPU in 10 ms ticks: read the mean over many posts (150+), not one post.
 *
 * Usage: `npx tsx bench/cpu-ab.ts <dirA> <dirB> [posts]` where each dir holds `.tmp/start/server.mjs`
 * (run `node scripts/build-start.mjs` in each first). `CPU_AB_PROF=dir` adds `--cpu-prof` to B, `CPU_AB_FLAGS_B` more node flags
 * (after `npm start`'s, so they win); `CPU_AB_CASES=duplicates,10 new` runs only those cases; `RSS` is printed at the end.
 */
import { readFileSync } from 'node:fs';
import { startFakes, productEnv } from './floor-fakes.js';
import { newGroup, nodeFlags, npmStartEnv, post, serve, type Served } from './floor-processes.js';

const [dirA = '', dirB = '', postsArg = '200'] = process.argv.slice(2);
const POSTS = Number(postsArg);
const TICK_MS = 10; // USER_HZ = 100 on Linux

function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

const fakes = await startFakes();
const flags = nodeFlags();
const start = (dir: string, extra: string[] = []) =>
  serve([...flags, ...extra, `${dir}/.tmp/start/server.mjs`], {
    ...npmStartEnv(),
    ...productEnv(fakes),
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
  });
const prof = process.env.CPU_AB_PROF;
const sides: [string, Served][] = [
  ['A', await start(dirA)],
  [
    'B',
    await start(dirB, [
      ...(prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : []),
      ...(process.env.CPU_AB_FLAGS_B?.split(' ').filter(Boolean) ?? []),
    ]),
  ],
];
for (let i = 0; i < 40; i++) for (const [, s] of sides) await post(s.url, newGroup(1 + (i % 10)));

const cases: Record<string, (s: Served) => Promise<() => string>> = {
  '10 duplicates': async (s) => {
    const body = newGroup(10);
    await post(s.url, body);
    return () => body;
  },
  '10 new': async () => () => newGroup(10),
  '1 new': async () => () => newGroup(1),
};
const only = process.env.CPU_AB_CASES?.split(',');
for (const [label, make] of Object.entries(cases)) {
  if (only && !only.some((o) => label.includes(o))) continue;
  const bodies = new Map(await Promise.all(sides.map(async ([name, s]) => [name, await make(s)] as const)));
  await settle();
  const from = process.hrtime.bigint() / 1000n;
  const cpu: Record<string, number[]> = { A: [], B: [] };
  const wall: Record<string, number[]> = { A: [], B: [] };
  for (let i = 0; i < POSTS; i++)
    for (const [name, s] of i % 2 ? [...sides].reverse() : sides) {
      const body = bodies.get(name)!();
      const before = cpuMs(s.pid);
      const r = await post(s.url, body);
      if (r.status !== 200) throw new Error(`${name} ${label}: ${r.status}`);
      await settle();
      cpu[name]!.push(cpuMs(s.pid) - before);
      wall[name]!.push(r.ms);
    }
  // CLOCK_MONOTONIC µs, as a V8 CPU profile's timestamps: a profile's samples of this case lie between.
  if (prof) console.log(`${label}: profile window ${from} ${process.hrtime.bigint() / 1000n}`);
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  console.log(
    `${label}: CPU ms/post A ${mean(cpu.A!).toFixed(2)} B ${mean(cpu.B!).toFixed(2)} (${((mean(cpu.B!) / mean(cpu.A!) - 1) * 100).toFixed(1)} %); wall p50 A ${median(wall.A!).toFixed(2)} B ${median(wall.B!).toFixed(2)}`,
  );
}
for (const [name, s] of sides) console.log(`${name} RSS ${s.rss().rssMiB} MiB (peak ${s.rss().peakMiB})`);
for (const [, s] of sides) await s.stop();
await fakes.close();
