import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * The key that signs cursors and other server-issued values. OPS_SECRET_KEY wins; otherwise
 * the embedded default keeps one in the data directory, created on first start. Several API
 * hosts must share OPS_SECRET_KEY.
 */
export function loadSecretKey(configured: string | undefined, dataDir: string): Buffer {
  if (configured) return Buffer.from(configured, 'utf8');
  const file = path.join(dataDir, 'secret.key');
  fs.mkdirSync(dataDir, { recursive: true });
  try {
    // 'wx' fails when the file exists, so two processes starting together keep one key.
    fs.writeFileSync(file, crypto.randomBytes(32).toString('base64'), { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'utf8');
}
