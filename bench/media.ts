// npm run bench:media — multipart upload throughput and peak RSS for 10 MB and 250 MB files
// against this machine's limit measured in the same run (sha256sum of the file, and a plain
// copy of it), and delivery throughput against a node:http + fs.createReadStream server.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../src/config/config.js';
import { createContext } from '../src/app/context.js';
import { systemClock } from '../src/shared/clock.js';
import { parseScopes } from '../src/tokens/token-service.js';
import { fmt, freePort, median, spawnServer, tempDir } from './support.js';

const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const MB = 1_000_000;

const dataDir = tempDir('bench-media-');
const work = tempDir('bench-media-files-');
const ctx = await createContext(loadConfig({ OPS_DATA_DIR: dataDir }), systemClock);
const org = await ctx.orgs.createOrg({ name: 'Bench', plan: 'enterprise', ownerEmail: 'bench@example.com' });
const { token } = await ctx.tokens.create({ tenant: { orgId: org.org_id, projectId: org.project_id, mode: 'live' }, name: 'bench', scopes: parseScopes('all'), expiresAt: null });
await ctx.close();

/** A valid MP4 header followed by random bytes (video: the 500 MB type limit, not 50 MB). */
function makeFile(size: number): string {
  const file = path.join(work, `f-${size}.mp4`);
  const fd = fs.openSync(file, 'w');
  const head = Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypisom\0\0\x02\0isomiso2', 'latin1')]);
  fs.writeSync(fd, head);
  const block = crypto.randomBytes(4 * 1024 * 1024);
  for (let written = head.length; written < size; ) {
    const n = Math.min(block.length, size - written);
    fs.writeSync(fd, block, 0, n);
    written += n;
  }
  fs.closeSync(fd);
  return file;
}

const seconds = (fn: () => void) => {
  const start = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - start) / 1e9;
};
const peakRss = (pid: number) => Number(/VmHWM:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;
const curlSeconds = (args: string[]) => Number(execFileSync('curl', ['-sS', '-o', '/dev/null', '-w', '%{time_total} %{http_code}', ...args]).toString().split(' ')[0]);

console.error("… starting server");
const server = await spawnServer({ OPS_DATA_DIR: dataDir, OPS_LOG_LEVEL: 'warn', OPS_RATE_LIMIT_PER_SECOND: '1000000', OPS_RATE_LIMIT_BURST: '1000000' });
const staticPort = await freePort();
// Its own process: the timing loops below block this one (execFileSync).
const staticSource = `const fs=require('fs');require('http').createServer((q,r)=>{const f=decodeURIComponent(q.url.slice(1));r.writeHead(200,{'content-type':'video/mp4','content-length':fs.statSync(f).size});fs.createReadStream(f).pipe(r)}).listen(${staticPort},'127.0.0.1')`;
const staticServer = spawn(process.execPath, ['-e', staticSource], { stdio: 'inherit' });
await new Promise((r) => setTimeout(r, 500));
const rows: string[] = [];
let failed = false;
try {
  for (const size of (process.env.BENCH_SIZES_MB ?? "10,250").split(",").map((n) => Number(n) * MB)) {
    console.error(`… ${size / MB} MB`);
    const file = makeFile(size);
    spawnSync('cat', [file], { stdio: ['ignore', 'ignore', 'inherit'] }); // warm the page cache
    const sha = median(Array.from({ length: rounds }, () => seconds(() => execFileSync('sha256sum', [file]))));
    const copy = median(
      Array.from({ length: rounds }, () =>
        seconds(() => {
          fs.copyFileSync(file, `${file}.copy`);
          fs.rmSync(`${file}.copy`);
        }),
      ),
    );
    // The upload hashes *and* writes; the slower of the two bounds it on this machine.
    const limitMBs = size / MB / Math.max(sha, copy);
    const rssBefore = peakRss(server.child.pid!);
    let url = '';
    const up = median(
      Array.from({ length: rounds }, () => {
        // curl's own time_total, as for delivery below: the transfer as the client saw it,
        // without curl's ~10 ms process start-up (sha256sum's start-up is ~1 ms).
        const out = execFileSync('curl', ['-sS', '-m', '120', '-w', '\n%{time_total}', '-H', `Authorization: Bearer ${token}`, '-F', `file=@${file};type=video/mp4`, `${server.apiUrl}/v1/media`]).toString();
        const newline = out.lastIndexOf('\n');
        const elapsed = Number(out.slice(newline + 1));
        const body = JSON.parse(out.slice(0, newline)) as { url?: string; error?: unknown };
        if (!body.url) throw new Error(`upload failed: ${out}`);
        url = body.url;
        return elapsed;
      }),
    );
    const rss = peakRss(server.child.pid!);
    const upMBs = size / MB / up;
    const ours = median(Array.from({ length: rounds }, () => curlSeconds([url])));
    const plain = median(Array.from({ length: rounds }, () => curlSeconds([`http://127.0.0.1:${staticPort}/${encodeURIComponent(file)}`])));
    const label = `${size / MB} MB`;
    rows.push(
      `${label}: sha256sum ${fmt(size / MB / sha)} MB/s, copy ${fmt(size / MB / copy)} MB/s → limit ${fmt(limitMBs)} MB/s`,
      `${label}: upload ${fmt(upMBs)} MB/s = ${fmt((100 * upMBs) / limitMBs)}% of limit (goal ≥ 60%); server peak RSS ${fmt(rss / 2 ** 20)} MiB (before ${fmt(rssBefore / 2 ** 20)} MiB; goal < 150 MB)`,
      `${label}: delivery ${fmt(size / MB / ours)} MB/s vs node:http static ${fmt(size / MB / plain)} MB/s = ${fmt((100 * plain) / ours)}% (goal ≥ 80%)`,
    );
    if (upMBs < 0.6 * limitMBs || rss > 150 * MB || plain / ours < 0.8) failed = true;
    fs.rmSync(file);
  }
} finally {
  staticServer.kill();
  await server.stop();
  fs.rmSync(work, { recursive: true, force: true });
  fs.rmSync(dataDir, { recursive: true, force: true });
}
console.log(`media benchmark (median of ${rounds} rounds, curl as the client, server as its own process)`);
for (const row of rows) console.log(`  ${row}`);
console.log(failed ? 'at least one goal missed' : 'all goals met');
