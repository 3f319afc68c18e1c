import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestServer, type TestServer } from '../../test-support/test-server.js';
import { distinctMessages, query, severityCounts } from '../../test-support/ingest/test-queries.js';
import { needs } from '../../test-support/ci.js';

const syslogNg = '/usr/sbin/syslog-ng';
const lines = 10_000;
/** The http() destination is a module of its own (Debian's syslog-ng-mod-http): without it syslog-ng refuses the config. */
const httpModule = (() => {
  try {
    return fs.readdirSync('/usr/lib/syslog-ng').some((version) => fs.existsSync(path.join('/usr/lib/syslog-ng', version, 'libhttp.so')));
  } catch {
    return false;
  }
})();
const missing = !fs.existsSync(syslogNg)
  ? `${syslogNg} is absent: install Debian's syslog-ng-core and syslog-ng-mod-http to run this test`
  : !httpModule
    ? "syslog-ng's http() module (/usr/lib/syslog-ng/*/libhttp.so) is absent: install Debian's syslog-ng-mod-http to run this test"
    : false;

/**
 * syslog-ng's own config: a file source read from its start, an http() destination building
 * Elasticsearch bulk bodies (what the elasticsearch-http() SCL does; Debian puts the SCL in
 * syslog-ng-scl, while http() needs only syslog-ng-mod-http), Basic auth with the token as
 * the password. Its persist file, pid file and control socket live in `dir`.
 */
function config(url: string, token: string, input: string): string {
  return `@version: 3.38
options { stats-freq(0); keep-hostname(yes); };
source s_game { file("${input}" flags(no-parse) follow-freq(0.1)); };
destination d_ops {
  http(
    url("${url}/elastic/_bulk")
    method("POST")
    user("syslog-ng")
    password("${token}")
    headers("Content-Type: application/x-ndjson")
    body-suffix("\\n")
    delimiter("\\n")
    body("{\\"index\\":{\\"_index\\":\\"syslog-ng\\"}}\\n$(format-json @timestamp=\${ISODATE} message=\${MESSAGE} level=\${LEVEL} host=\${HOST} program=\${PROGRAM})")
    batch-lines(1000)
    batch-timeout(100)
  );
};
log { source(s_game); destination(d_ops); };
`;
}

describe("Debian's syslog-ng tails a file toward /v1/elastic/_bulk", needs(missing), () => {
  let s: TestServer;
  let dir: string;
  let child: ChildProcess | undefined;
  const stderr: string[] = [];
  before(async () => {
    s = await startTestServer();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ops-syslog-ng-'));
  });
  after(async () => {
    if (child && child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((resolve) => child!.once('exit', resolve));
    }
    await s.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('every line of the file arrives once, with its message and severity', async () => {
    const input = path.join(dir, 'game.log');
    fs.writeFileSync(input, Array.from({ length: lines / 2 }, (_, i) => `syslog line ${i}\n`).join(''));
    fs.writeFileSync(path.join(dir, 'syslog-ng.conf'), config(s.baseUrl, s.tenants.a.token, input));
    child = spawn(
      syslogNg,
      ['-F', '--no-caps', '-f', path.join(dir, 'syslog-ng.conf'), '-R', path.join(dir, 'persist'), '-p', path.join(dir, 'pid'), '-c', path.join(dir, 'ctl'), '-e'],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    child.stderr!.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
    // The second half is appended while it runs: it tails, not just reads.
    fs.appendFileSync(input, Array.from({ length: lines / 2 }, (_, i) => `syslog line ${lines / 2 + i}\n`).join(''));

    const deadline = Date.now() + 20_000;
    let count = 0;
    while (count < lines) {
      assert.equal(child.exitCode, null, `syslog-ng exited: ${stderr.join('')}`);
      assert.ok(Date.now() < deadline, `only ${count} of ${lines} lines arrived in 20 s; syslog-ng said: ${stderr.join('').slice(-2000)}`);
      const r = await s.request('POST', '/query', { json: { q: 'dataset:syslog-ng stats count()' } });
      count = r.status === 200 ? (r.body.stats[0]?.values['count()'] ?? 0) : 0;
      if (count < lines) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(await distinctMessages(s, 'syslog-ng'), lines);
    assert.deepEqual(await severityCounts(s, 'syslog-ng'), { info: lines }, 'a file source\'s lines are "notice": info');
    const [e] = (await query(s, 'dataset:syslog-ng AND message:"syslog line 9999"')).events;
    assert.ok(e, 'the last line');
    assert.ok(Math.abs(Date.parse(String(e.ts)) - Date.now()) < 120_000, 'ts from ISODATE');
  });
});
