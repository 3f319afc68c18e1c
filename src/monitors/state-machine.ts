import type { Condition } from './monitor.js';
import type { GroupState } from './tables.js';

/** What one evaluation knows of a group. */
export interface GroupStep {
  state: GroupState;
  /** When the group entered its state (ms). */
  since: number;
  /** When a firing notification last went out (ms), or null. */
  notifiedAt: number | null;
}

export interface StepSettings {
  condition: Condition;
  forMs: number;
  repeatMs: number;
  noData: 'ok' | 'alerting';
  muted: boolean;
  notifyOnResolve: boolean;
}

export interface StepResult {
  state: GroupState;
  since: number;
  notifiedAt: number | null;
  /** A notification to send now. */
  notify: 'firing' | 'resolved' | null;
}

export function breaches(value: number | null, condition: Condition, noData: 'ok' | 'alerting'): boolean {
  if (value === null) return noData === 'alerting';
  switch (condition.op) {
    case '>':
      return value > condition.value;
    case '>=':
      return value >= condition.value;
    case '<':
      return value < condition.value;
    case '<=':
      return value <= condition.value;
    case '==':
      return value === condition.value;
  }
}

/**
 * One group's step at `now` (docs/monitors.md "State machine"): ok → pending (while `for` has
 * not passed) → firing → ok. A firing group is notified when it starts firing and again every
 * `repeat`; muted, nothing is sent and the first evaluation after the mute ends notifies a group
 * still firing. A resolve is notified only if the firing was (or would have been) sent unmuted.
 */
export function step(group: GroupStep, value: number | null, now: number, s: StepSettings): StepResult {
  const bad = breaches(value, s.condition, s.noData);
  const same = { state: group.state, since: group.since, notifiedAt: group.notifiedAt, notify: null };
  if (!bad) {
    if (group.state === 'ok') return same;
    const notify = group.state === 'firing' && s.notifyOnResolve && !s.muted && group.notifiedAt !== null ? 'resolved' : null;
    return { state: 'ok', since: now, notifiedAt: null, notify };
  }
  if (group.state === 'ok' && s.forMs > 0) return { state: 'pending', since: now, notifiedAt: null, notify: null };
  if (group.state === 'pending' && now - group.since < s.forMs) return same;
  const since = group.state === 'firing' ? group.since : now;
  const due = group.notifiedAt === null || now - group.notifiedAt >= s.repeatMs;
  if (s.muted || !due) return { state: 'firing', since, notifiedAt: group.notifiedAt, notify: null };
  return { state: 'firing', since, notifiedAt: now, notify: 'firing' };
}
