// One log line of a push, as both readers (push-wire.ts, decode.ts) give it to the mapping.

export interface LokiEntry {
  /** Epoch ms; undefined when the entry has no timestamp (the time of arrival is used). */
  ts: number | undefined;
  line: string;
  /** Structured metadata (Loki 3): name → value. */
  metadata: Record<string, string>;
}

/** An entry's structured metadata when it has none: one object for all (the mapping only reads it, and skips it by identity). */
export const noMetadata: Record<string, string> = Object.freeze({}) as Record<string, string>;
