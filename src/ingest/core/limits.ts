/** DECISIONS §9 limits (MB/KB are decimal, as everywhere in the product). */
export const ingestLimits = { bodyBytes: 10_000_000, events: 10_000, eventBytes: 256_000 } as const;

/**
 * Our bounds on one event's payload (docs/decisions.md, "Hardening: event bounds"): objects and
 * arrays nest at most `depth` levels (the payload object is level 1), and the payload holds at
 * most `keys` keys, counting the keys of nested objects (inside arrays too) and the top-level
 * keys that move into the payload. They bound what one event costs schema discovery, group by
 * and JSON.stringify (whose recursion overflowed the stack on ~5,000 levels).
 */
export const payloadLimits = { depth: 32, keys: 1_000 } as const;

/** measure's answers past a bound. */
export const tooDeep = -1;
export const tooWide = -2;

/**
 * One pass over a payload value at nesting level `depth`: the running key count `keys` plus
 * this value's keys, or tooDeep / tooWide as soon as a bound is passed. The recursion stops
 * one level past the depth bound, so it cannot overflow whatever JSON.parse produced.
 */
export function measure(value: object, depth: number, keys: number): number {
  if (depth > payloadLimits.depth) return tooDeep;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      if (typeof v === 'object' && v !== null) {
        keys = measure(v, depth + 1, keys);
        if (keys < 0) return keys;
      }
    }
    return keys;
  }
  for (const key in value) {
    if (++keys > payloadLimits.keys) return tooWide;
    const v: unknown = (value as Record<string, unknown>)[key];
    if (typeof v === 'object' && v !== null) {
      keys = measure(v, depth + 1, keys);
      if (keys < 0) return keys;
    }
  }
  return keys;
}

/** The message of a bound measure passed (tooDeep, tooWide); `subject` names what was measured: an event's payload, or a log entry's meta. */
export function shapeMessage(result: number, subject = 'payload'): string {
  return result === tooDeep
    ? `the ${subject} nests objects and arrays more than ${payloadLimits.depth} levels deep (the ${subject} object is level 1); at most ${payloadLimits.depth} levels are accepted`
    : `the ${subject} has more than ${payloadLimits.keys} keys (counting the keys of nested objects); at most ${payloadLimits.keys} are accepted`;
}

/**
 * The payload bounds for a payload built by another path than ingest (a log entry's `meta`):
 * the message of the bound it passes, or undefined within them. Safe on any depth.
 */
export function payloadShapeProblem(payload: object, subject: string): string | undefined {
  const result = measure(payload, 1, 0);
  return result < 0 ? shapeMessage(result, subject) : undefined;
}
