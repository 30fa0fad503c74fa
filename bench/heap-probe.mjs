// Loaded with `node --expose-gc --import bench/heap-probe.mjs` (bench/floor.ts): on SIGWINCH, a full
// garbage collection, then the process's memory as JSON in HEAP_PROBE_FILE. Tells live data (heap used
// after the collection) from the heap V8 keeps for garbage it has not yet collected.
import { writeFileSync } from 'node:fs';

process.on('SIGWINCH', () => {
  const before = process.memoryUsage();
  globalThis.gc?.();
  const after = process.memoryUsage();
  writeFileSync(process.env.HEAP_PROBE_FILE, JSON.stringify({ before, after }));
});
