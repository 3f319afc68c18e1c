// The words the editor offers beyond SOQL's own: the payload keys and datasets of the events shown.
import type { ApiEvent } from './events-table';
import type { Vocabulary } from './soql-complete';
import { fieldText } from './soql-text';

/** Payload keys (up to 200, as SOQL writes them) and datasets of the events shown: the editor offers them. */
export function vocabularyOf(events: readonly ApiEvent[]): Vocabulary {
  const keys = new Set<string>();
  const datasets = new Set<string>();
  const walk = (value: unknown, path: string[], depth: number) => {
    if (keys.size >= 200 || depth > 4) return;
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      const text = fieldText(['payload', ...path]);
      if (text) keys.add(text);
      return;
    }
    for (const [key, inner] of Object.entries(value)) walk(inner, [...path, key], depth + 1);
  };
  for (const event of events) {
    datasets.add(event.dataset);
    if (event.payload && typeof event.payload === 'object') for (const [key, inner] of Object.entries(event.payload)) walk(inner, [key], 1);
  }
  return { payloadKeys: [...keys].sort(), datasets: [...datasets].sort() };
}
