/**
 * When a threshold monitor is due (docs/monitors.md "Due times"). Each monitor has a slot inside
 * its `every`: an offset from the epoch's grid of `every`, taken from a hash of its statement —
 * tenant, `q` and `window` — so it stays the same across evaluations, processes and restarts.
 * Monitors created together (or made due together: a restart after an outage) are due together
 * once, and from their first evaluation on each statement at its own offset: 1,000 different
 * monitors of `every: 1m` fall due about 17 a second instead of all at once each minute, which
 * made the API's p99 jump every minute. Monitors of
 * one statement (a warning and a critical threshold on one query) keep falling due together, so
 * one batch still reads their window once (evaluator.ts `windowValues`).
 */

/** What shares a slot: the statement a monitor's evaluation runs (the key of evaluator.ts's shared answers, without the batch's time). */
export function slotKey(monitor: { org_id: string; project_id: string; mode: string; q: string; window: string | null }): string {
  return JSON.stringify([monitor.org_id, monitor.project_id, monitor.mode, monitor.q, monitor.window]);
}

/** FNV-1a over the key's UTF-16 code units: cheap, stable, and spread enough for keys that differ in one character. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  // A final avalanche, so the low bits (the offset is the hash modulo `every`) depend on every character.
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  return h >>> 0;
}

/** The offset inside each interval of `everyMs` of a slot key, in [0, everyMs). */
export function slotOffsetMs(key: string, everyMs: number): number {
  return hash(key) % everyMs;
}

/**
 * The first due time strictly after `now` of a monitor of slot key `key`: the next `k × every + offset`. One per
 * interval of `every` on its grid, whatever the time the evaluation ran: an evaluation that ran
 * late (a backlog, a lease taken over) is followed by the next slot, not by `now + every`, so
 * lateness neither drifts the monitor's phase nor evaluates an interval twice; a slot missed
 * whole (the evaluators were down) is skipped, not caught up.
 */
export function nextDueMs(key: string, everyMs: number, now: number): number {
  const offset = slotOffsetMs(key, everyMs);
  return (Math.floor((now - offset) / everyMs) + 1) * everyMs + offset;
}
