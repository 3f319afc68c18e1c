import os from 'node:os';

/**
 * "<host>-<pid>": who holds a temporary thing (a temp file, an upload's reservation), so a
 * sweeper on the same host can tell that its holder died and reclaim it at once, instead of
 * waiting for it to expire.
 */
const host = os.hostname().replace(/[^A-Za-z0-9]/g, '_');

export const processOwner = (): string => `${host}-${process.pid}`;

/** True when `owner` names a process of this host that no longer runs. */
export function ownerGone(owner: string): boolean {
  const dash = owner.lastIndexOf('-');
  if (dash <= 0) return false;
  if (owner.slice(0, dash) !== host) return false;
  return !isAlive(Number(owner.slice(dash + 1)));
}

function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
