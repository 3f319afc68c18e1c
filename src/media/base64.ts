import { badRequest } from '../errors/app-error.js';

/**
 * Decodes strict base64 (whitespace allowed, padding optional) or a `data:<type>;base64,`
 * URL. Node's decoder skips invalid characters silently, so the alphabet is checked first.
 */
export function decodeBase64Payload(input: string): { bytes: Buffer; mediaType: string | undefined } {
  let mediaType: string | undefined;
  let body = input;
  if (/^data:/i.test(input)) {
    const comma = input.indexOf(',');
    const meta = comma < 0 ? '' : input.slice(5, comma);
    if (comma < 0 || !/;base64$/i.test(meta)) throw badRequest('a data: URL must be of the form data:<type>;base64,<data>');
    mediaType = meta.slice(0, -';base64'.length).split(';')[0]!.trim() || undefined;
    body = input.slice(comma + 1);
  }
  const compact = body.replace(/\s+/g, '');
  if (compact === '' || !/^[A-Za-z0-9+/]+={0,2}$/.test(compact) || compact.length % 4 === 1 || (compact.includes('=') && compact.length % 4 !== 0)) {
    throw badRequest('invalid base64: the data must be standard base64 (A–Z, a–z, 0–9, +, /, = padding)');
  }
  return { bytes: Buffer.from(compact, 'base64'), mediaType };
}
