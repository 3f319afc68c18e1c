import fs from 'node:fs';

/**
 * Per-tenant change counts of the events one DuckDB owner stores, in a small file the API
 * processes of the same machine read (`opsctl serve --workers N`: the primary's events node
 * writes, the workers read).
 *
 * Why: a worker asked the events node over loopback HTTP for every GET /datasets and every
 * query page, where a single process answers the same page again from memory while the tenant's
 * events are unchanged (logged-event-store.ts, readUnchanged): one round trip cost a worker more
 * CPU than the whole request costs a single process, so two workers served less than one. With
 * this board a worker keeps those answers
 * too, under the count it read before asking, and asks again once the count moved: one pread
 * instead of a round trip.
 *
 * Exact as the owner's cache is: the owner moves a tenant's count when an append is over, before
 * it is answered, and around each delete, so a read that follows an acknowledged append (from
 * any process) reads a count that differs from the one any older answer was kept under.
 * Tenants share 4,096 slots by a hash: two tenants in one slot only refresh each other's
 * answers more often. The owner starts every slot one past what the file held, so answers kept
 * by a worker before an owner's restart are never served after it.
 */
const slots = 4096;
const slotBytes = 8;

function slotOf(owner: string): number {
  // FNV-1a over the string's UTF-16 units: cheap, and spread enough for slots.
  let hash = 0x811c9dc5;
  for (let i = 0; i < owner.length; i++) {
    hash ^= owner.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % slots;
}

/** The owner's side: moves a tenant's count. */
export class ChangeBoardWriter {
  private readonly counts: Float64Array;
  private readonly one = Buffer.alloc(slotBytes);

  private constructor(
    private readonly fd: number,
    counts: Float64Array,
  ) {
    this.counts = counts;
  }

  /** Opens (or creates) the board at `file`, every slot one past what it held. */
  static open(file: string): ChangeBoardWriter {
    const fd = fs.openSync(file, fs.constants.O_RDWR | fs.constants.O_CREAT, 0o600);
    const bytes = Buffer.alloc(slots * slotBytes);
    fs.readSync(fd, bytes, 0, bytes.length, 0);
    const counts = new Float64Array(slots);
    for (let i = 0; i < slots; i++) {
      const held = bytes.readDoubleLE(i * slotBytes);
      counts[i] = (Number.isFinite(held) && held >= 0 ? held : 0) + 1;
      bytes.writeDoubleLE(counts[i]!, i * slotBytes);
    }
    fs.writeSync(fd, bytes, 0, bytes.length, 0);
    return new ChangeBoardWriter(fd, counts);
  }

  /** The tenant's stored events changed (or are about to: a delete moves it before and after). */
  bump(owner: string): void {
    const slot = slotOf(owner);
    const count = ++this.counts[slot]!;
    this.one.writeDoubleLE(count, 0);
    fs.writeSync(this.fd, this.one, 0, slotBytes, slot * slotBytes);
  }

  close(): void {
    fs.closeSync(this.fd);
  }
}

/** A reader's side (a worker): the tenant's current count. */
export class ChangeBoardReader {
  private readonly one = Buffer.alloc(slotBytes);

  private constructor(private readonly fd: number) {}

  static open(file: string): ChangeBoardReader {
    return new ChangeBoardReader(fs.openSync(file, fs.constants.O_RDONLY));
  }

  read(owner: string): number {
    fs.readSync(this.fd, this.one, 0, slotBytes, slotOf(owner) * slotBytes);
    return this.one.readDoubleLE(0);
  }

  close(): void {
    fs.closeSync(this.fd);
  }
}

/** Where the owner of `eventsDir` keeps its board. */
export const changeBoardFile = (eventsDir: string) => `${eventsDir}/changes.board`;
