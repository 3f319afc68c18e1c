// npm run bench:media — multipart upload throughput and peak RSS for 10 MB and 250 MB files
// against this machine's limit measured in the same run (sha256sum of the file, and a plain
// copy of it), and delivery throughput against a node:http + fs.createReadStream server; on
// the file store and, when Swift is up (scripts/swift-s3.sh start), on the S3 store beside it.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../src/config/config.js';
import { createContext } from '../src/app/context.js';
import { systemClock } from '../src/shared/clock.js';
import { parseScopes } from '../src/tokens/token-service.js';
import { fmt, freePort, median, spawnServer, tempDir } from './support.js';
import { clearS3Prefix, ensureBucket } from '../src/test-support/stores/s3-testing.js';
import { DeleteObjectCommand, GetObjectCommand } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { S3BlobStore, parseS3Url, partSize } from '../src/stores/blobs/s3-blob-store.js';

const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const MB = 1_000_000;

const work = tempDir('bench-media-files-');

/** A data directory with an organisation on the enterprise plan and an all-scopes token. */
async function prepare(env: Record<string, string>): Promise<{ dataDir: string; token: string }> {
  const dataDir = tempDir('bench-media-');
  const ctx = await createContext(loadConfig({ OPS_DATA_DIR: dataDir, ...env }), systemClock);
  const org = await ctx.orgs.createOrg({ name: 'Bench', plan: 'enterprise', ownerEmail: 'bench@example.com' });
  const { token } = await ctx.tokens.create({ tenant: { orgId: org.org_id, projectId: org.project_id, mode: 'live' }, name: 'bench', scopes: parseScopes('all'), expiresAt: null });
  await ctx.close();
  return { dataDir, token };
}

/**
 * The S3 store beside the file store when Swift is up (scripts/swift-s3.sh start): its bucket
 * `opsplatform-bench`, a prefix of this run's own. BENCH_S3=0 leaves it out.
 */
async function s3Env(): Promise<Record<string, string> | undefined> {
  if (process.env.BENCH_S3 === '0') return undefined;
  if (spawnSync('scripts/swift-s3.sh', ['status'], { stdio: 'ignore' }).status !== 0) {
    console.error('… Swift is not running (scripts/swift-s3.sh start): the file store only');
    return undefined;
  }
  const lines = execFileSync('scripts/swift-s3.sh', ['env']).toString();
  const env: Record<string, string> = {};
  for (const [, name, value] of lines.matchAll(/^export (\w+)='([^']*)'$/gm)) env[name!] = value!;
  const url = new URL(env.OPS_TEST_BLOB_URL!.replace('s3://opsplatform-test', 's3://opsplatform-bench'));
  url.pathname = `/bench-${process.pid}`;
  Object.assign(process.env, { AWS_ACCESS_KEY_ID: env.AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY: env.AWS_SECRET_ACCESS_KEY });
  await ensureBucket(url.toString());
  return { OPS_BLOB_URL: url.toString(), AWS_ACCESS_KEY_ID: env.AWS_ACCESS_KEY_ID!, AWS_SECRET_ACCESS_KEY: env.AWS_SECRET_ACCESS_KEY!, AWS_REGION: env.AWS_REGION! };
}

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

interface Store {
  label: string;
  env: Record<string, string>;
  dataDir: string;
  token: string;
  server: Awaited<ReturnType<typeof spawnServer>>;
}
const stores: Store[] = [];
const serverEnv = { OPS_LOG_LEVEL: 'warn', OPS_RATE_LIMIT_PER_SECOND: '1000000', OPS_RATE_LIMIT_BURST: '1000000' };
const s3 = await s3Env();
for (const [label, env] of [['file', {}], ...(s3 ? [['S3', s3]] : [])] as Array<[string, Record<string, string>]>) {
  console.error(`… starting the server on the ${label} store`);
  const { dataDir, token } = await prepare(env);
  const server = await spawnServer({ OPS_DATA_DIR: dataDir, ...serverEnv, ...env });
  stores.push({ label, env, dataDir, token, server });
}
const staticPort = await freePort();
// Its own process: the timing loops below block this one (execFileSync).
const staticSource = `const fs=require('fs');require('http').createServer((q,r)=>{const f=decodeURIComponent(q.url.slice(1));r.writeHead(200,{'content-type':'video/mp4','content-length':fs.statSync(f).size});fs.createReadStream(f).pipe(r)}).listen(${staticPort},'127.0.0.1')`;
const staticServer = spawn(process.execPath, ['-e', staticSource], { stdio: 'inherit' });
await new Promise((r) => setTimeout(r, 500));
const rows: string[] = [];
let failed = false;

/** Upload (curl -F, curl's own time_total), peak RSS and delivery of one file through one store's server. */
function measure(store: Store, file: string, size: number) {
  const rssBefore = peakRss(store.server.child.pid!);
  let url = '';
  const up = median(
    Array.from({ length: rounds }, () => {
      // curl's own time_total, as for delivery below: the transfer as the client saw it,
      // without curl's ~10 ms process start-up (sha256sum's start-up is ~1 ms).
      const out = execFileSync('curl', ['-sS', '-m', '300', '-w', '\n%{time_total}', '-H', `Authorization: Bearer ${store.token}`, '-F', `file=@${file};type=video/mp4`, `${store.server.apiUrl}/v1/media`]).toString();
      const newline = out.lastIndexOf('\n');
      const elapsed = Number(out.slice(newline + 1));
      const body = JSON.parse(out.slice(0, newline)) as { url?: string; error?: unknown };
      if (!body.url) throw new Error(`upload failed on the ${store.label} store: ${out}`);
      url = body.url;
      return elapsed;
    }),
  );
  const rss = peakRss(store.server.child.pid!);
  const delivery = median(Array.from({ length: rounds }, () => curlSeconds([url])));
  return { upMBs: size / MB / up, downMBs: size / MB / delivery, rss, rssBefore };
}

/**
 * The S3 store's own limit in this run: the same file sent straight from this process with the
 * SDK (the same Upload settings as the store) and read back, no HTTP server in between.
 */
async function directS3(blobUrl: string, file: string, size: number): Promise<{ upMBs: number; downMBs: number }> {
  const store = new S3BlobStore(parseS3Url(blobUrl));
  const Bucket = store.options.bucket;
  const Key = `${store.options.prefix}/direct/${path.basename(file)}`;
  try {
    const ups: number[] = [];
    const downs: number[] = [];
    for (let i = 0; i < rounds; i++) {
      let start = performance.now();
      await new Upload({ client: store.client, params: { Bucket, Key, Body: fs.createReadStream(file) }, partSize, queueSize: 2 }).done();
      ups.push((performance.now() - start) / 1000);
      start = performance.now();
      const out = await store.client.send(new GetObjectCommand({ Bucket, Key }));
      for await (const chunk of out.Body as AsyncIterable<Buffer>) void chunk;
      downs.push((performance.now() - start) / 1000);
    }
    await store.client.send(new DeleteObjectCommand({ Bucket, Key }));
    return { upMBs: size / MB / median(ups), downMBs: size / MB / median(downs) };
  } finally {
    store.close();
  }
}

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
    const plain = median(Array.from({ length: rounds }, () => curlSeconds([`http://127.0.0.1:${staticPort}/${encodeURIComponent(file)}`])));
    const plainMBs = size / MB / plain;
    const label = `${size / MB} MB`;
    rows.push(`${label}: sha256sum ${fmt(size / MB / sha)} MB/s, copy ${fmt(size / MB / copy)} MB/s → limit ${fmt(limitMBs)} MB/s; node:http static delivery ${fmt(plainMBs)} MB/s`);
    for (const store of stores) {
      const m = measure(store, file, size);
      const pad = store.label.padEnd(4);
      rows.push(
        `${label} ${pad}: upload ${fmt(m.upMBs)} MB/s = ${fmt((100 * m.upMBs) / limitMBs)}% of limit; delivery ${fmt(m.downMBs)} MB/s = ${fmt((100 * m.downMBs) / plainMBs)}% of static; server peak RSS ${fmt(m.rss / 2 ** 20)} MiB (before ${fmt(m.rssBefore / 2 ** 20)} MiB)`,
      );
      if (store.env.OPS_BLOB_URL) {
        const direct = await directS3(store.env.OPS_BLOB_URL, file, size);
        rows.push(
          `${label} ${pad}: the store itself (SDK from this process, no server): upload ${fmt(direct.upMBs)} MB/s, read ${fmt(direct.downMBs)} MB/s → ours ${fmt((100 * m.upMBs) / direct.upMBs)}% / ${fmt((100 * m.downMBs) / direct.downMBs)}% of it`,
        );
      }
      // Goals: the file store's throughput (upload ≥ 60% of the limit, delivery ≥ 80% of static);
      // RSS < 150 MB on every store. The S3 store's throughput is the object server's.
      if (m.rss > 150 * MB) failed = true;
      if (store.label === 'file' && (m.upMBs < 0.6 * limitMBs || m.downMBs < 0.8 * plainMBs)) failed = true;
    }
    fs.rmSync(file);
  }
} finally {
  staticServer.kill();
  for (const store of stores) {
    await store.server.stop();
    fs.rmSync(store.dataDir, { recursive: true, force: true });
    if (store.env.OPS_BLOB_URL) await clearS3Prefix(store.env.OPS_BLOB_URL).catch((error: unknown) => console.error(`… could not empty ${store.env.OPS_BLOB_URL}: ${String(error)}`));
  }
  fs.rmSync(work, { recursive: true, force: true });
}
console.log(`media benchmark (median of ${rounds} rounds, curl as the client, each server its own process; stores: ${stores.map((s) => s.label).join(', ')})`);
for (const row of rows) console.log(`  ${row}`);
console.log('goals: file store upload ≥ 60% of the limit and delivery ≥ 80% of static; server peak RSS < 150 MB on every store');
console.log(failed ? 'at least one goal missed' : 'all goals met');
