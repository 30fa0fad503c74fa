/**
 * Reads a V8 CPU profile (`node --cpu-prof`) and sums self time by where the code lives: npm package,
 * our own file, or Node itself. Used by the floor benchmark to print what a group's time is spent on.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  hitCount?: number;
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/**
 * Where a frame's code lives: `pkg:<name>`, our `shared/…` file, a file of the bundle relative to the
 * repository (`.tmp/start/chunks/…`, never the machine's absolute path), `node:<module>`, or
 * `(idle)`/`(gc)`/`(program)`.
 */
function owner(frame: ProfileNode['callFrame']): string {
  if (!frame.url) return frame.functionName.startsWith('(') ? frame.functionName : '(native)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(frame.url);
  if (pkg) return `pkg:${pkg[1]}`;
  if (frame.url.startsWith('node:')) return frame.url;
  const ours = /\/((?:shared|functions|bench)\/.+)$/.exec(frame.url);
  if (ours) return ours[1]!;
  return frame.url.startsWith('file:') ? relative(process.cwd(), fileURLToPath(frame.url)) : frame.url;
}

/**
 * Self time by owner, busiest first, idle excluded.
 * @returns `[owner, share of busy time 0–1, milliseconds]`
 */
export function selfTimeByOwner(dir: string, top = 12): [string, number, number][] {
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) return [];
  const profile = JSON.parse(readFileSync(`${dir}/${file}`, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const micros = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const key = owner(byId.get(id)!.callFrame);
    micros.set(key, (micros.get(key) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  micros.delete('(idle)');
  const busy = [...micros.values()].reduce((a, b) => a + b, 0);
  return [...micros]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([k, us]) => [k, us / busy, us / 1000]);
}
