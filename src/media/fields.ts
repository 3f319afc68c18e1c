import { badRequest } from '../errors/app-error.js';

/** Tags are matched as whole JSON strings (files-repo), so `"` and `\` are not allowed in them. */
const controls = '\\u0000-\\u001f\\u007f';
const tagPattern = new RegExp(`^[^"\\\\${controls},]{1,64}$`);
const folderPattern = new RegExp(`^[^${controls}]{0,256}$`);

export function checkFolder(folder: string | undefined): string {
  const value = (folder ?? '').trim();
  if (!folderPattern.test(value)) throw badRequest('folder must be at most 256 characters without control characters');
  return value;
}

/** Tags from repeated fields and/or comma lists; trimmed, de-duplicated, at most 20. */
export function checkTags(values: string[]): string[] {
  const tags = [...new Set(values.flatMap((v) => v.split(',')).map((t) => t.trim()).filter(Boolean))];
  for (const tag of tags) {
    if (!tagPattern.test(tag)) throw badRequest(`invalid tag "${tag.slice(0, 64)}": 1 to 64 characters, no quotes, backslashes, commas or control characters`);
  }
  if (tags.length > 20) throw badRequest('at most 20 tags per file');
  return tags;
}
