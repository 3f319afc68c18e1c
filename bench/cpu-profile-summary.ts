// tsx bench/cpu-profile-summary.ts DIR|FILE… [--top 30] — sums the self time of V8 CPU profiles
// (node --cpu-prof: one .cpuprofile per thread, main and workers) by function and by file, and
// prints the top entries per profile: where a server's CPU went (docs/benchmarks.md "Profiling").
//   BENCH_SHAPES=realistic BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" npm run bench:ingest
//   npx tsx bench/cpu-profile-summary.ts /tmp/prof
import fs from 'node:fs';
import path from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

// Piped into head: stop quietly when the reader goes.
process.stdout.on('error', () => process.exit(0));

const args = process.argv.slice(2);
const topAt = args.indexOf('--top');
const top = topAt >= 0 ? Number(args.splice(topAt, 2)[1]) : 30;
const files = args.flatMap((a) => (fs.statSync(a).isDirectory() ? fs.readdirSync(a).filter((f) => f.endsWith('.cpuprofile')).sort().map((f) => path.join(a, f)) : [a]));

const shortUrl = (url: string) => {
  if (!url) return '(native)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) return url.slice(nm + 'node_modules/'.length);
  const dist = url.indexOf('/dist/');
  if (dist >= 0) return url.slice(dist + 1);
  return url.replace(/^file:\/\//, '').replace(/^node:/, 'node:');
};

for (const file of files) {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!;
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const idleIds = new Set(profile.nodes.filter((n) => n.callFrame.functionName === '(idle)').map((n) => n.id));
  const idle = [...self].filter(([id]) => idleIds.has(id)).reduce((a, [, t]) => a + t, 0);
  const busy = total - idle;
  const byFunction = new Map<string, number>();
  const byFile = new Map<string, number>();
  for (const [id, t] of self) {
    if (idleIds.has(id)) continue;
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    const where = shortUrl(url);
    const fn = `${functionName || '(anonymous)'}  ${where}${url ? `:${lineNumber + 1}` : ''}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + t);
    byFile.set(where, (byFile.get(where) ?? 0) + t);
  }
  const pct = (t: number) => `${((100 * t) / busy).toFixed(1).padStart(5)}%`;
  const ms = (t: number) => `${(t / 1000).toFixed(0).padStart(7)} ms`;
  console.log(`\n${path.basename(file)}: ${(total / 1e6).toFixed(1)} s sampled, busy ${(busy / 1e6).toFixed(1)} s (${((100 * busy) / total).toFixed(0)}%); shares are of busy time`);
  console.log(`  top ${top} functions by self time`);
  for (const [fn, t] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(t)} ${ms(t)}  ${fn}`);
  console.log(`  top ${top} files by self time`);
  for (const [f, t] of [...byFile].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(t)} ${ms(t)}  ${f}`);
}
