// npm run bench:dashboard — the explorer in Chromium, measured with the browser's Performance API
// (the goals: "first load of the explorer < 300 KB of compressed JS; the explorer renders 1,000
// rows and a live tail of 200 events/s without dropping frames").
//
// Starts the test server in this process (src/test-support/test-server.ts, through the browser
// tests' harness: the built dashboard, Debian's /usr/bin/chromium via playwright-core), seeds
// events, signs in, and measures:
//  1. first load: the JS the explorer page transfers with an empty cache (resource timing's
//     encodedBodySize, the Content-Encoding it came with) and the brotli size of the same files;
//  2. rendering 1,000 result rows: "Load more" nine times (100 → 1,000 rows), and Live on with
//     those 1,000 rows (one render of 1,000 new rows); long tasks (PerformanceObserver 'longtask')
//     and frame gaps (requestAnimationFrame) over 50 ms while it happens;
//  3. a live tail at BENCH_RATE events/s (default 200) for BENCH_SECONDS (default 10), ingested
//     from here in batches every 50 ms: frame gaps, long tasks, and event-to-screen latency
//     (the event's send time, in its message, to the animation frame after its row was added).
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import type { Page } from 'playwright-core';
import { startDashboard, widths } from '../src/test-support/dashboard/test-browser.js';
import { fmt } from './support.js';

const rate = Number(process.env.BENCH_RATE ?? 200);
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const batchMs = 50;
const jsLimitBytes = 300 * 1000;
const frameLimitMs = 50;

const d = await startDashboard();
const started = Date.now();
try {
  // 1,500 events over the last hour in one dataset (more than the 1,000 rows loaded below).
  const seed = Array.from({ length: 1500 }, (_, i) => ({
    ts: new Date(started - 5_000 - i * 2_000).toISOString(),
    severity: i % 10 === 0 ? 'error' : i % 4 === 0 ? 'warn' : 'info',
    event: i % 2 ? 'player.join' : 'match.start',
    source: `srv-${i % 5}`,
    actor: `player-${i % 50}`,
    message: `seeded event ${i}: player joined the match on the eu-west-1 region after a short wait`,
    payload: { region: 'eu-west-1', ping: 20 + (i % 90), map: `map-${i % 7}` },
  }));
  const res = await d.s.request('POST', '/datasets/bench/ingest', { json: seed });
  if (res.status !== 200) throw new Error(`seeding failed: ${res.status} ${res.text}`);
  await d.member('bench@example.com', 'Owner');
  console.log(`bench:dashboard — Chromium ${d.browser.version()}, viewport ${widths.desktop.width}×${widths.desktop.height}, test server in this process`);

  // ---- 1. first load -----------------------------------------------------------------------
  const { context, page } = await d.context(widths.desktop);
  // tsx compiles the functions given to page.evaluate with esbuild's keepNames, whose __name helper the page lacks.
  await context.addInitScript({ content: 'window.__name = (f) => f;' });
  await d.signIn(page, 'bench@example.com');
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
  const encodings = new Map<string, string>();
  page.on('response', (r) => encodings.set(r.url(), r.headers()['content-encoding'] ?? 'identity'));
  await page.goto(`${d.url}/?q=${encodeURIComponent('dataset:bench')}`);
  await settled(page);
  await cdp.send('Network.setCacheDisabled', { cacheDisabled: false });
  const resources = await page.evaluate(() =>
    performance.getEntriesByType('resource').map((e) => {
      const r = e as PerformanceResourceTiming;
      return { name: r.name, encoded: r.encodedBodySize, decoded: r.decodedBodySize, transfer: r.transferSize };
    }),
  );
  const js = resources.filter((r) => /\.js(\?|$)/.test(r.name));
  const css = resources.filter((r) => /\.css(\?|$)/.test(r.name));
  const sum = (list: typeof resources, key: 'encoded' | 'decoded' | 'transfer') => list.reduce((a, r) => a + r[key], 0);
  const brotliOf = (url: string) => {
    const file = path.join('dist/web/assets', path.basename(new URL(url).pathname));
    return fs.existsSync(`${file}.br`) ? fs.statSync(`${file}.br`).size : zlib.brotliCompressSync(fs.readFileSync(file)).length;
  };
  const jsBrotli = js.reduce((a, r) => a + brotliOf(r.name), 0);
  const jsEncoding = [...new Set(js.map((r) => encodings.get(r.name) ?? '?'))].join(', ');
  console.log('\n1. first load of the explorer (empty cache)');
  for (const r of js) console.log(`  ${path.basename(new URL(r.name).pathname)}: ${fmt(r.encoded)} bytes sent (${encodings.get(r.name)}), ${fmt(r.decoded)} bytes unpacked, ${fmt(brotliOf(r.name))} bytes as brotli`);
  console.log(`  JS: ${fmt(sum(js, 'encoded'))} bytes transferred (${jsEncoding}), ${fmt(jsBrotli)} bytes brotli, ${fmt(sum(js, 'decoded'))} bytes unpacked  [limit ${fmt(jsLimitBytes)} compressed: ${jsBrotli < jsLimitBytes && sum(js, 'encoded') < jsLimitBytes ? 'met' : 'MISSED'}]`);
  console.log(`  CSS: ${fmt(sum(css, 'encoded'))} bytes transferred`);

  // ---- 2. 1,000 rows -------------------------------------------------------------------------
  await watchFrames(page);
  const pages = await page.evaluate(async () => {
    const rows = () => document.querySelectorAll('[data-testid=events] .event').length;
    const nextFrame = () => new Promise<number>((r) => requestAnimationFrame(() => r(performance.now())));
    const out: Array<{ total: number; render: number }> = [];
    while (rows() < 1000) {
      const want = rows() + 100;
      const before = performance.getEntriesByType('resource').length;
      const t0 = performance.now();
      (document.querySelector('[data-testid=load-more]') as HTMLButtonElement).click();
      await new Promise<void>((resolve) => {
        const check = () => (rows() >= want ? resolve() : requestAnimationFrame(check));
        check();
      });
      const painted = await nextFrame();
      const answer = performance.getEntriesByType('resource').slice(before).find((e) => e.name.endsWith('/v1/query')) as PerformanceResourceTiming | undefined;
      out.push({ total: painted - t0, render: painted - (answer?.responseEnd ?? t0) });
    }
    return out;
  });
  const loadMore = await framesSince(page);
  console.log('\n2. rendering 1,000 result rows');
  console.log(
    `  "Load more" ×${pages.length} (100 → 1,000 rows): click → painted ${fmt(Math.max(...pages.map((p) => p.total)), 1)} ms at most (median ${fmt(median(pages.map((p) => p.total)), 1)}); ` +
      `answer → painted (rendering) ${fmt(Math.max(...pages.map((p) => p.render)), 1)} ms at most (median ${fmt(median(pages.map((p) => p.render)), 1)})`,
  );
  console.log(`  while loading: ${describeFrames(loadMore)}`);

  await watchFrames(page);
  const liveRender = await page.evaluate(async () => {
    const t0 = performance.now();
    (document.querySelector('[data-testid=live]') as HTMLButtonElement).click();
    await new Promise<void>((resolve) => {
      const check = () => (document.querySelectorAll('.live-rows .event').length >= 1000 ? resolve() : requestAnimationFrame(check));
      check();
    });
    const painted = await new Promise<number>((r) => requestAnimationFrame(() => r(performance.now())));
    return painted - t0;
  });
  const liveFrames = await framesSince(page);
  console.log(`  Live on with 1,000 rows (all rendered anew): click → painted ${fmt(liveRender, 1)} ms; ${describeFrames(liveFrames)}`);

  // ---- 3. live tail at `rate` events/s -------------------------------------------------------
  await page.waitForFunction(() => document.querySelector('[data-testid=connection]')?.getAttribute('data-state') === 'connected');
  await page.evaluate(() => {
    window.scrollTo(0, 0);
    const w = window as unknown as { latencies: number[] };
    w.latencies = [];
    new MutationObserver((records) => {
      const sent: number[] = [];
      for (const r of records)
        for (const n of r.addedNodes) {
          const m = n instanceof HTMLElement ? /^bench-live (\d+)/.exec(n.querySelector('.message')?.textContent ?? '') : null;
          if (m) sent.push(Number(m[1]));
        }
      if (sent.length) requestAnimationFrame(() => sent.forEach((s) => w.latencies.push(Date.now() - s)));
    }).observe(document.querySelector('.live-rows')!, { childList: true, subtree: true });
  });
  await watchFrames(page);
  await cdp.send('Performance.enable');
  const metricsBefore = (await cdp.send('Performance.getMetrics')).metrics;
  const perBatch = Math.max(1, Math.round((rate * batchMs) / 1000));
  const batches = Math.round((seconds * 1000) / batchMs);
  let sentEvents = 0;
  const ingestMs: number[] = [];
  const t0 = Date.now();
  const inflight: Array<Promise<void>> = [];
  for (let b = 0; b < batches; b++) {
    const due = t0 + b * batchMs;
    if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
    const at = Date.now();
    const events = Array.from({ length: perBatch }, (_, i) => ({ event: 'bench.live', message: `bench-live ${at} #${b * perBatch + i}`, source: 'bench', severity: i % 20 ? 'info' : 'warn' }));
    sentEvents += events.length;
    inflight.push(
      d.s.request('POST', '/datasets/bench/ingest', { json: events }).then((r) => {
        if (r.status !== 200) throw new Error(`ingest ${r.status}`);
        ingestMs.push(Date.now() - at);
      }),
    );
  }
  await Promise.all(inflight);
  await page.waitForFunction((n) => (window as unknown as { latencies: number[] }).latencies.length >= n, Math.min(sentEvents, 1000), { timeout: 10_000 }).catch(() => undefined);
  await page.waitForTimeout(500);
  const tail = await framesSince(page);
  const metricsAfter = (await cdp.send('Performance.getMetrics')).metrics;
  const metric = (name: string) => (metricsAfter.find((m) => m.name === name)?.value ?? 0) - (metricsBefore.find((m) => m.name === name)?.value ?? 0);
  const latencies = await page.evaluate(() => (window as unknown as { latencies: number[] }).latencies);
  const kept = await page.evaluate(() => document.querySelectorAll('.live-rows .event').length);
  const sorted = [...latencies].sort((a, b) => a - b);
  const pct = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
  console.log(`\n3. live tail, ${fmt(rate)} events/s for ${seconds} s (${fmt(sentEvents)} events in batches of ${perBatch} every ${batchMs} ms; ingest answered in median ${fmt(median(ingestMs))} ms)`);
  console.log(`  rows shown ${fmt(latencies.length)} of ${fmt(sentEvents)} sent; ${fmt(kept)} kept in the table (cap 1,000)`);
  console.log(`  event → screen: p50 ${fmt(pct(50))} ms, p95 ${fmt(pct(95))} ms, p99 ${fmt(pct(99))} ms, max ${fmt(sorted[sorted.length - 1] ?? NaN)} ms`);
  console.log(`  ${describeFrames(tail)}`);
  console.log(
    `  main thread (CDP Performance metrics): script ${fmt(metric('ScriptDuration') * 1000)} ms, style ${fmt(metric('RecalcStyleDuration') * 1000)} ms, ` +
      `layout ${fmt(metric('LayoutDuration') * 1000)} ms, all tasks ${fmt(metric('TaskDuration') * 1000)} ms; ${fmt(metric('LayoutCount'))} layouts, ${fmt(metric('RecalcStyleCount'))} style recalcs`,
  );
  const ok = (f: Frames) => f.gapsOver50 === 0;
  console.log(
    `\nlimits: first-load JS < ${fmt(jsLimitBytes / 1000)} KB compressed (${fmt(jsBrotli / 1000, 1)} KB: ${jsBrotli < jsLimitBytes ? 'met' : 'MISSED'}); ` +
      `no frame gap over ${frameLimitMs} ms while rendering 1,000 rows (${ok(loadMore) && ok(liveFrames) ? 'met' : 'MISSED'}) and during the tail (${ok(tail) ? 'met' : 'MISSED'})`,
  );
  await context.close();
} finally {
  await d.close();
}

interface Frames {
  frames: number;
  ms: number;
  gapsOver50: number;
  maxGap: number;
  over33: number;
  longTasks: number;
  longTaskMs: number;
  maxLongTask: number;
}

/** Starts counting frame gaps and long tasks in the page (read with framesSince). */
async function watchFrames(page: Page): Promise<void> {
  await page.evaluate(() => {
    const w = window as unknown as { bench?: { stop: () => void }; benchFrames: number[]; benchLong: number[]; benchStart: number };
    w.bench?.stop();
    w.benchFrames = [];
    w.benchLong = [];
    w.benchStart = performance.now();
    let last = performance.now();
    let on = true;
    const loop = (t: number) => {
      if (!on) return;
      w.benchFrames.push(t - last);
      last = t;
      requestAnimationFrame(loop);
    };
    requestAnimationFrame((t) => {
      last = t;
      requestAnimationFrame(loop);
    });
    const observer = new PerformanceObserver((list) => list.getEntries().forEach((e) => w.benchLong.push(e.duration)));
    observer.observe({ type: 'longtask', buffered: false });
    w.bench = {
      stop: () => {
        on = false;
        observer.disconnect();
      },
    };
  });
}

async function framesSince(page: Page): Promise<Frames> {
  return page.evaluate(() => {
    const w = window as unknown as { bench?: { stop: () => void }; benchFrames: number[]; benchLong: number[]; benchStart: number };
    w.bench?.stop();
    const f = w.benchFrames;
    return {
      frames: f.length,
      ms: performance.now() - w.benchStart,
      gapsOver50: f.filter((g) => g > 50).length,
      maxGap: Math.max(0, ...f),
      over33: f.filter((g) => g > 33.4).length,
      longTasks: w.benchLong.length,
      longTaskMs: w.benchLong.reduce((a, b) => a + b, 0),
      maxLongTask: Math.max(0, ...w.benchLong),
    };
  });
}

function describeFrames(f: Frames): string {
  return (
    `${fmt(f.frames)} frames in ${fmt(f.ms / 1000, 1)} s (${fmt(f.frames / (f.ms / 1000), 0)} fps), frame gaps > 50 ms: ${f.gapsOver50} (longest ${fmt(f.maxGap, 1)} ms), > 33 ms: ${f.over33}; ` +
    `long tasks: ${f.longTasks} (${fmt(f.longTaskMs)} ms in all, longest ${fmt(f.maxLongTask)} ms)`
  );
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)]! : NaN;
}

async function settled(page: Page): Promise<void> {
  await page.waitForFunction(() => {
    const r = document.querySelector('[data-testid=results]');
    return r !== null && ['done', 'error'].includes(r.getAttribute('data-status') ?? '') && r.getAttribute('data-q') === new URLSearchParams(location.search).get('q');
  });
}
