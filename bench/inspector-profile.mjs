// A preload that profiles a server's main thread with node:inspector's Profiler, for the benches
// whose server uses DuckDB (`node --cpu-prof` makes it abort at exit). Profiling runs from when
// $PROF_DIR/start exists until $PROF_DIR/stop appears, then writes $PROF_DIR/main-PID.cpuprofile (and
// worker-PID-THREAD.cpuprofile for each worker thread, which inherits the preload):
//   mkdir -p /tmp/prof && touch /tmp/prof/start
//   PROF_DIR=/tmp/prof BENCH_PARTS=match BENCH_ROUNDS=1 BENCH_NODE_ARGS="--import $PWD/bench/inspector-profile.mjs" npm run bench:monitors
//   (touch /tmp/prof/stop once the rounds are printed, before the server stops)
//   npx tsx bench/cpu-profile-summary.ts /tmp/prof
import inspector from 'node:inspector';
import fs from 'node:fs';
import process from 'node:process';
import { clearInterval, setInterval } from 'node:timers';
import { isMainThread, threadId } from 'node:worker_threads';

const dir = process.env.PROF_DIR ?? '/tmp/prof';
// Worker threads inherit the preload (execArgv) and share the pid: each thread writes its own file,
// or the events worker's mostly idle profile overwrote the main thread's.
const name = isMainThread ? `main-${process.pid}` : `worker-${process.pid}-${threadId}`;
const session = new inspector.Session();
session.connect();
let state = 'idle';
const timer = setInterval(() => {
  if (state === 'idle' && fs.existsSync(`${dir}/start`)) {
    state = 'running';
    session.post('Profiler.enable', () => session.post('Profiler.setSamplingInterval', { interval: 250 }, () => session.post('Profiler.start')));
  } else if (state === 'running' && fs.existsSync(`${dir}/stop`)) {
    state = 'done';
    session.post('Profiler.stop', (error, result) => {
      if (!error) fs.writeFileSync(`${dir}/${name}.cpuprofile`, JSON.stringify(result.profile));
      clearInterval(timer);
    });
  }
}, 200);
timer.unref();
