import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { ownerGone, processOwner } from '../../shared/process-owner.js';
import { defaultSweepGraceMs, isValidKey, type BlobInventory, type BlobStat, type BlobStore, type ByteRange, type KnownKeys } from './blob-store.js';

const tmpDirName = '.tmp';

/**
 * Blobs as files under `root`. A write goes to `root/.tmp/<host>-<pid>-<random>`, is
 * fsynced, then renamed into place (and the directory fsynced), so a crash at any point
 * leaves either the whole blob or an invisible temp file, which `sweep` removes.
 */
export class FsBlobStore implements BlobStore {
  private readonly tmp: string;

  constructor(
    private readonly root: string,
    /** A temp file or unknown blob this old is an orphan (even if its writer's pid was reused). */
    private readonly graceMs = defaultSweepGraceMs,
  ) {
    this.tmp = path.join(root, tmpDirName);
    fs.mkdirSync(this.tmp, { recursive: true });
  }

  /** `root/<2 chars>/<key>`: a fan-out level keeps directories small. */
  private pathOf(key: string): string {
    if (!isValidKey(key)) throw new Error(`invalid blob key`);
    const full = path.join(this.root, key.slice(0, 2).replace(/[^A-Za-z0-9]/g, '_'), key);
    // Belt and braces: the key check already rules out escaping the root.
    if (!full.startsWith(this.root + path.sep)) throw new Error('invalid blob key');
    return full;
  }

  async put(key: string, body: Readable): Promise<BlobStat> {
    const target = this.pathOf(key);
    // "<host>-<pid>-<random>": the sweeper reclaims it at once when its writer has died.
    const temp = path.join(this.tmp, `${processOwner()}-${crypto.randomBytes(8).toString('hex')}`);
    const handle = await fsp.open(temp, 'wx', 0o640);
    let closed = false;
    try {
      // A plain loop rather than a write stream: the handle stays ours to fsync, and leaving
      // the loop early (a write error) destroys `body`, which stops the upload upstream.
      let size = 0;
      for await (const chunk of body as AsyncIterable<Buffer>) {
        await handle.write(chunk);
        size += chunk.length;
      }
      await handle.sync();
      await handle.close();
      closed = true;
      await fsp.mkdir(path.dirname(target), { recursive: true });
      await fsp.rename(temp, target);
      await syncDir(path.dirname(target));
      return { size };
    } catch (error) {
      if (!closed) await handle.close().catch(() => {});
      await fsp.rm(temp, { force: true });
      throw error;
    }
  }

  async get(key: string, range?: ByteRange): Promise<Readable | undefined> {
    let handle: fsp.FileHandle;
    try {
      handle = await fsp.open(this.pathOf(key), 'r');
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
    return handle.createReadStream({ start: range?.start, end: range?.end, highWaterMark: 256 * 1024 });
  }

  async stat(key: string): Promise<BlobStat | undefined> {
    try {
      const stat = await fsp.stat(this.pathOf(key));
      return stat.isFile() ? { size: stat.size } : undefined;
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  async exists(key: string): Promise<boolean> {
    return (await this.stat(key)) !== undefined;
  }

  async delete(key: string): Promise<void> {
    const file = this.pathOf(key);
    await fsp.rm(file, { force: true });
    // The key's own directories are removed when empty; the fan-out level stays.
    const fanout = path.join(this.root, key.slice(0, 2).replace(/[^A-Za-z0-9]/g, '_'));
    for (let dir = path.dirname(file); dir.startsWith(fanout + path.sep); dir = path.dirname(dir)) {
      try {
        await fsp.rmdir(dir);
      } catch {
        break; // not empty (or already gone): stop climbing
      }
    }
  }

  async sweep(known: KnownKeys): Promise<number> {
    let removed = 0;
    for (const name of await fsp.readdir(this.tmp)) {
      const file = path.join(this.tmp, name);
      const stat = await fsp.stat(file).catch(() => undefined);
      if (!stat) continue;
      const writerGone = ownerGone(name.slice(0, name.lastIndexOf('-')));
      if (writerGone || Date.now() - stat.mtimeMs > this.graceMs) {
        await fsp.rm(file, { force: true });
        removed++;
      }
    }
    // Blobs no record knows (a delete that failed after its record was gone), past the grace
    // period, asked about in batches.
    const cutoff = Date.now() - this.graceMs;
    let batch: string[] = [];
    const flush = async () => {
      const keep = batch.length ? await known(batch) : new Set<string>();
      for (const key of batch) {
        if (keep.has(key)) continue;
        await this.delete(key);
        removed++;
      }
      batch = [];
    };
    for await (const { key, mtimeMs } of this.walk()) {
      if (mtimeMs > cutoff) continue;
      batch.push(key);
      if (batch.length >= 500) await flush();
    }
    await flush();
    return removed;
  }

  /** Every stored blob: `root/<fan-out>/<key>`, the temp directory left out. */
  private async *walk(): AsyncGenerator<{ key: string; mtimeMs: number }> {
    for (const fanout of await fsp.readdir(this.root)) {
      if (fanout === tmpDirName) continue;
      const base = path.join(this.root, fanout);
      const entries = await fsp.readdir(base, { recursive: true, withFileTypes: true }).catch(() => []);
      for (const entry of entries) {
        if (!entry.isFile()) continue;
        const file = path.join(entry.parentPath, entry.name);
        const key = path.relative(base, file).split(path.sep).join('/');
        if (!isValidKey(key)) continue;
        const stat = await fsp.stat(file).catch(() => undefined);
        if (stat) yield { key, mtimeMs: stat.mtimeMs };
      }
    }
  }

  async inventory(): Promise<BlobInventory> {
    const blobs: string[] = [];
    for await (const { key } of this.walk()) blobs.push(key);
    return { blobs, pending: await fsp.readdir(this.tmp).catch(() => []) };
  }

  async ping(): Promise<void> {
    await fsp.access(this.tmp, fs.constants.W_OK);
  }
}

const isMissing = (error: unknown) => (error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR';

/** Makes the rename itself durable. */
async function syncDir(dir: string): Promise<void> {
  const handle = await fsp.open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
