import crypto from 'node:crypto';

/**
 * A file name safe in a URL path, a storage key and a header: the last path segment,
 * letters, digits, `.`, `_` and `-` only, no leading dot, at most 100 characters.
 */
export function sanitiseName(original: string): string {
  const base = original.split(/[\\/]/).pop() ?? '';
  const cleaned = base
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^[.-]+/, '')
    .slice(-100);
  return cleaned === '' || cleaned === '.' || cleaned === '..' ? 'file' : cleaned;
}

/**
 * The storage key (also the URL path): 128 random bits, unrelated to the id and to any
 * tenant, then the sanitised name, so a URL can be neither guessed nor attributed.
 */
export const newStorageKey = (original: string): string => `${crypto.randomBytes(16).toString('hex')}/${sanitiseName(original)}`;

/** The shape `newStorageKey` makes; the delivery listener refuses any other path early. */
export const storageKeyPattern = /^[0-9a-f]{32}\/[A-Za-z0-9_][A-Za-z0-9._-]{0,99}$/;

/**
 * `inline` with an ASCII fallback name and the UTF-8 original (RFC 6266), so no quote,
 * CR/LF or non-ASCII byte from an uploaded name reaches the header raw.
 */
export function contentDisposition(originalName: string): string {
  const fallback = sanitiseName(originalName);
  const encoded = encodeURIComponent([...originalName].filter((c) => c.charCodeAt(0) > 0x1f && c !== '\x7f').join('')).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `inline; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}
