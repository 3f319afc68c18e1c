/** SPEC.md §8: the only content types an upload may have. */
export const supportedTypes = ['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'video/mp4', 'video/webm', 'application/pdf'] as const;
export type SupportedType = (typeof supportedTypes)[number];

export const isSupportedType = (value: string): value is SupportedType => (supportedTypes as readonly string[]).includes(value);

/** How many leading bytes `sniff` needs to decide (WebM's DocType sits a little way in). */
export const sniffBytes = 4096;

const ascii = (bytes: Uint8Array, at: number, text: string) => {
  if (bytes.length < at + text.length) return false;
  for (let i = 0; i < text.length; i++) if (bytes[at + i] !== text.charCodeAt(i)) return false;
  return true;
};

const startsWith = (bytes: Uint8Array, magic: number[]) => bytes.length >= magic.length && magic.every((b, i) => bytes[i] === b);

/** ISO BMFF brands that are still images (HEIF/AVIF), not MP4 video. */
const imageBrands = new Set(['heic', 'heix', 'hevc', 'hevx', 'heim', 'heis', 'mif1', 'msf1', 'avif', 'avis']);

function isWebm(bytes: Uint8Array): boolean {
  if (!startsWith(bytes, [0x1a, 0x45, 0xdf, 0xa3])) return false;
  // The EBML header's DocType element (0x4282) says "webm" (Matroska says "matroska").
  const end = Math.min(bytes.length - 6, 64);
  for (let i = 4; i <= end; i++) {
    if (bytes[i] === 0x42 && bytes[i + 1] === 0x82 && ascii(bytes, i + 3, 'webm')) return true;
  }
  return false;
}

/**
 * The content type the bytes really are, by magic numbers, or undefined when they are none
 * of the supported types. Pure: give it the first `sniffBytes` bytes (or the whole file).
 */
export function sniff(bytes: Uint8Array): SupportedType | undefined {
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (ascii(bytes, 0, 'GIF87a') || ascii(bytes, 0, 'GIF89a')) return 'image/gif';
  if (ascii(bytes, 0, 'RIFF') && ascii(bytes, 8, 'WEBP')) return 'image/webp';
  if (ascii(bytes, 4, 'ftyp') && bytes.length >= 12) {
    const brand = String.fromCharCode(...bytes.subarray(8, 12));
    return imageBrands.has(brand) ? undefined : 'video/mp4';
  }
  if (isWebm(bytes)) return 'video/webm';
  if (ascii(bytes, 0, '%PDF-')) return 'application/pdf';
  return undefined;
}

/** A declared Content-Type without parameters or case (`Image/PNG; x=y` → `image/png`). */
export const normaliseType = (value: string): string => value.split(';')[0]!.trim().toLowerCase();
