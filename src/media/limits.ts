import type { PlanCatalogue } from '../plans/catalogue.js';
import type { SupportedType } from './sniff.js';

const MB = 1_000_000;

/** SPEC.md §8: size limit by kind of content, whatever the plan. */
const byKind = { image: 50 * MB, video: 500 * MB, audio: 100 * MB, document: 50 * MB } as const;

const kindOf = (type: SupportedType): keyof typeof byKind =>
  type.startsWith('image/') ? 'image' : type.startsWith('video/') ? 'video' : 'document';

/** SPEC.md §8: the base64 endpoint's decoded and raw-body caps. */
export const base64Limits = { decodedBytes: 10 * MB, rawBodyBytes: 14 * MB } as const;

/**
 * The one place upload size limits are decided (DECISIONS.md §7): the smaller of the
 * plan's max file size and the content type's limit. Without a type yet (form B before
 * sniffing), the plan limit alone bounds the stream until the bytes say what they are.
 */
export function fileLimit(plans: PlanCatalogue, plan: string, type: SupportedType | undefined): number {
  const planLimit = plans.limits(plan).max_file_bytes;
  return type ? Math.min(planLimit, byKind[kindOf(type)]) : planLimit;
}
