// tsx bench/cpu-profile-busy.ts FILE.cpuprofile — how a thread's busy time comes in one piece:
// the runs of samples between two idle ones (a run may hold several macrotasks back to back: the
// loop does not go idle between setImmediate turns), by length, and the runs of garbage
// collection. What a request's p99 waits behind on the event loop (docs/benchmarks.md "Profiling").
//   mkdir -p /tmp/prof && touch /tmp/prof/start   (then touch /tmp/prof/stop when the phase ends)
//   PROF_DIR=/tmp/prof BENCH_PARTS=threshold BENCH_THRESHOLD_ROUNDS=1 BENCH_NODE_ARGS="--import $PWD/bench/inspector-profile.mjs" npm run bench:monitors
//   npx tsx bench/cpu-profile-busy.ts /tmp/prof/main-*.cpuprofile
import fs from 'node:fs';

interface Profile {
  nodes: Array<{ id: number; callFrame: { functionName: string } }>;
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

process.stdout.on('error', () => process.exit(0));

const bounds = [1, 2, 5, 10, 20, 50, Infinity];
/** Runs of consecutive samples that `inRun` accepts, in ms (a sample lasts until the next one). */
function runs(p: Profile, inRun: (name: string) => boolean): number[] {
  const names = new Map(p.nodes.map((n) => [n.id, n.callFrame.functionName]));
  const out: number[] = [];
  let current = 0;
  for (let i = 0; i < p.samples.length; i++) {
    if (inRun(names.get(p.samples[i]!) ?? '')) current += (p.timeDeltas[i + 1] ?? 0) / 1000;
    else if (current) {
      out.push(current);
      current = 0;
    }
  }
  if (current) out.push(current);
  return out.sort((a, b) => b - a);
}

function print(title: string, xs: number[]): void {
  const sum = (ys: number[]) => ys.reduce((a, b) => a + b, 0);
  console.log(`  ${title}: ${xs.length} runs, ${(sum(xs) / 1000).toFixed(2)} s; longest ${xs.slice(0, 8).map((x) => x.toFixed(1)).join(', ')} ms`);
  let low = 0;
  for (const high of bounds) {
    const inside = xs.filter((x) => x >= low && x < high);
    console.log(`    ${low}–${high === Infinity ? '' : high} ms: ${inside.length} runs, ${(sum(inside) / 1000).toFixed(2)} s`);
    low = high;
  }
}

for (const file of process.argv.slice(2)) {
  const p = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
  console.log(`${file}: ${((p.endTime - p.startTime) / 1e6).toFixed(1)} s profiled`);
  print('busy (between idle samples)', runs(p, (name) => name !== '(idle)'));
  print('garbage collection', runs(p, (name) => name === '(garbage collector)'));
}
