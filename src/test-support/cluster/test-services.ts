import net from 'node:net';
import pg from 'pg';

/**
 * The services the cross-process tests need (PostgreSQL, Redis, NATS), on the machine's usual
 * addresses (CI starts them: .ci/run), a fresh PostgreSQL database both test servers share,
 * and a TCP proxy a test closes to take a service away.
 */
export const services = {
  postgres: process.env.OPS_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  redis: { host: '127.0.0.1', port: 6379 },
  nats: { host: '127.0.0.1', port: 4222 },
};

/** Whether something accepts TCP connections there (within 500 ms). */
export function reachable(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** A reason to skip the cross-process tests, or false when PostgreSQL, Redis and NATS all answer. */
export async function missingServices(): Promise<string | false> {
  const pgUrl = new URL(services.postgres);
  const checks: Array<[string, Promise<boolean>]> = [
    [`PostgreSQL at ${pgUrl.host}`, reachable(pgUrl.hostname, Number(pgUrl.port || 5432))],
    [`Redis at ${services.redis.host}:${services.redis.port}`, reachable(services.redis.host, services.redis.port)],
    [`NATS at ${services.nats.host}:${services.nats.port}`, reachable(services.nats.host, services.nats.port)],
  ];
  const missing: string[] = [];
  for (const [name, up] of checks) if (!(await up)) missing.push(name);
  return missing.length ? `not reachable: ${missing.join(', ')} (.ci/run starts them; see /work/.library/env/machines/node-svc.md)` : false;
}

/** A database of its own on the PostgreSQL server, for several test servers at once. */
export async function sharedDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `ops_xproc_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: services.postgres });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(services.postgres);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

/** A free TCP port on loopback (nothing listens there once this resolves). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * A TCP proxy on a fixed loopback port to a service: `down()` closes it and cuts every
 * connection (the service is gone for whoever uses the proxy), `up()` listens again on the same
 * port, `stall()` keeps connections open but forwards nothing until `up()` (a service that stopped
 * answering for a while).
 */
export class TcpProxy {
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  private stalled = false;

  private constructor(
    readonly port: number,
    private readonly target: { host: string; port: number },
  ) {}

  static async start(target: { host: string; port: number }): Promise<TcpProxy> {
    const proxy = new TcpProxy(await freePort(), target);
    await proxy.up();
    return proxy;
  }

  async up(): Promise<void> {
    if (this.stalled) {
      // What was held back flows on, in order: a slow service, not a lost reply.
      this.stalled = false;
      for (const socket of this.sockets) socket.resume();
    }
    if (this.server) return;
    const server = net.createServer((client) => {
      const upstream = net.connect(this.target);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      if (this.stalled) {
        client.pause();
        upstream.pause();
      }
      client.pipe(upstream);
      upstream.pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.server = server;
  }

  stall(): void {
    this.stalled = true;
    for (const socket of this.sockets) socket.pause();
  }

  async down(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    if (server) await new Promise((resolve) => server.close(resolve));
  }
}
