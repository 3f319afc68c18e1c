/**
 * The SQL the production compiler writes, query by query (as kysely's tests pin theirs): each
 * row of TABLE gives a query, the exact filter text and parameters of compileDuckDbFilter
 * (and, for `group by`, of compileDuckDbGroupKey), and what that SQL selects from a few fixed
 * events in the event store's own table (duckdb/soql-testkit.test.ts: `schemaSql`, the store's tenant
 * condition and aggregate statement). A change to the compiler shows here as a diff of SQL
 * text in review; the answers check the text still means what SOQL.md says, and the in-memory
 * predicate of live tail must select the same events. Each row also pins the ClickHouse text
 * of the same query (compileClickHouseFilter / compileClickHouseGroupKey, `ch`); what that SQL
 * selects on a ClickHouse server is checked by clickhouse/soql-agreement.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { StoredEvent } from '../shared/event-record.js';
import { float64Hex as h } from './clickhouse/literal.js';
import { compilePredicate, parseSoql, type Expr } from '../soql/index.js';
import { compileClickHouseFilter, compileClickHouseGroupKey, compileDuckDbFilter, compileDuckDbGroupKey, compileFilter, compileGroupKey, dialectFalse, decodeGroupValue, type GroupValue, type SqlParam } from './soql-compile.js';
import { duckDbCannotRead, type MemoryEvent } from '../soql/predicate.js';
import { DATASET_IDS, NOW } from '../soql/testkit.test.js';
import { TENANT, loadEvents, openEventsDb, selectGroups, selectSeqs } from './duckdb/soql-testkit.test.js';

const min = 60_000;
const hour = 60 * min;
const uuid = (seq: number): string => `0190f5c2-7d1e-7a3b-8c4d-00000000000${seq}`;
const iso = (ms: number): string => new Date(ms).toISOString();

const ev = (seq: number, e: Omit<Partial<MemoryEvent>, 'seq'>): MemoryEvent => ({
  seq,
  event_id: uuid(seq),
  ts: NOW,
  ingested_at: (e.ts ?? NOW) + 1_000,
  dataset: 'game',
  severity: 1,
  event: 'e',
  actor: null,
  source: null,
  message: '',
  payload: {},
  bytes_raw: 100,
  ...e,
});

const EVENTS: MemoryEvent[] = [
  ev(1, { severity: 1, event: 'player.join', actor: 'alice', source: 'eu-west-1', message: 'Connection lost to server', ts: NOW - 5 * min, bytes_raw: 120,
    payload: { region: 'eu-central', ping: 150, map: 'dust', ok: true, tags: ['a', 'b'], meta: { ver: '1.2' } } }),
  ev(2, { dataset: 'matchmaking', severity: 2, event: 'match.start', actor: 'bot-7', source: 'srv-eu-1', message: 'queue 50%_full', ts: NOW - 20 * min, bytes_raw: 800,
    payload: { region: 'EU-west', ping: '150', map: 'nuke', ok: false, n: null } }),
  ev(3, { dataset: 'auth', severity: 3, event: 'login.failed', source: 'us-east-1', message: 'bad password', ts: NOW - 2 * hour, bytes_raw: 1500,
    payload: { ping: 300, 'a.b': 'dot', 'x y': 1, '~/k': 't' } }),
  ev(4, { severity: 4, event: 'crash', actor: 'Bot-9', message: 'Straße ΟΔΟΣ', ts: NOW - 24 * hour, bytes_raw: 2000 }),
  ev(5, { dataset: 'auth', severity: 0, event: 'player.leave', actor: 'carol', source: 'srv-2', message: 'connection LOST again', ts: NOW + min, bytes_raw: 0,
    payload: { region: 'us', ping: 20.5, map: 'inferno' } }),
  ev(6, { severity: 2, event: 'player.join', actor: 'dave', source: 'EU-WEST-1a', message: 'hello', ts: NOW - 10 * min, bytes_raw: 300,
    payload: { region: 'eu', map: 'dust', ping: -3 } }),
  // An unpaired surrogate: ingest's JSON.stringify stores it as `\ud800`, which DuckDB's JSON
  // reader refuses; the payload reads as empty (and must not fail the queries around it).
  ev(7, { dataset: 'matchmaking', severity: 1, event: 'match.end', actor: 'bot-1', source: 'srv-eu-2', message: 'done', ts: NOW - 30 * min, bytes_raw: 100,
    payload: { map: '\ud800', ping: 1 } }),
];

interface Case {
  q: string;
  sql: string;
  params: SqlParam[];
  seqs: number[];
  /** For `group by`: the key expression and the decoded groups, as POST /query orders them. */
  key?: { sql: string; params: SqlParam[] };
  groups?: [GroupValue, number][];
  /** The ClickHouse filter (text and parameters) and, for `group by`, key of the same query. */
  ch: { sql: string; params: SqlParam[]; key?: { sql: string; params: SqlParam[] } };
}

const ESC = "ESCAPE '\\'";
const type = 'TRY(json_type(payload, ?))';
const str = 'TRY(json_extract_string(payload, ?))';
const num = 'TRY_CAST(CAST(TRY(json_extract(payload, ?)) AS VARCHAR) AS DOUBLE)';
const payloadKey = "NULLIF(TRY(json_extract(payload, ?))::VARCHAR, 'null')";

// ClickHouse 18.16 (clickhouse-soql.ts): the flattened payload's arrays, lowerUTF8 for ILIKE, numbers as IEEE 754 bytes.
const at = 'indexOf(payload_paths, ?)';
const T = `arrayElement(payload_types, ${at})`;
const S = `arrayElement(payload_text, ${at})`;
const N = `arrayElement(payload_numbers, ${at})`;
const fold = (x: string): string => `lowerUTF8(replaceAll(${x}, '\\xC4\\xB0', 'i'))`;
const like = (x: string): string => `${fold(x)} LIKE ${fold('?')}`;
const F64 = 'reinterpretAsFloat64(unhex(?))';
const chPayloadKey = "nullIf(nullIf(arrayElement(payload_json, indexOf(payload_paths, ?)), 'null'), '')";

const TABLE: Case[] = [
  { q: '', sql: 'TRUE', params: [], seqs: [1, 2, 3, 4, 5, 6, 7], ch: { sql: '1', params: [] } },

  // severity: ordinal, by its index
  { q: 'severity >= warn', sql: '(severity >= ?)', params: [2], seqs: [2, 3, 4, 6], ch: { sql: '(severity >= ?)', params: [2] } },
  { q: 'severity:ERROR', sql: '(severity = ?)', params: [3], seqs: [3], ch: { sql: '(severity = ?)', params: [3] } },
  { q: 'severity < info', sql: '(severity < ?)', params: [1], seqs: [5], ch: { sql: '(severity < ?)', params: [1] } },
  { q: 'severity != warn', sql: '(severity <> ?)', params: [2], seqs: [1, 3, 4, 5, 7], ch: { sql: '(severity <> ?)', params: [2] } },
  { q: 'severity in (debug, fatal)', sql: '((severity = ?) OR (severity = ?))', params: [0, 4], seqs: [4, 5], ch: { sql: '((severity = ?) OR (severity = ?))', params: [0, 4] } },

  // text fields: == exact, : contains or whole-field wildcard (case-insensitive), LIKE characters literal
  { q: 'event == "player.join"', sql: 'COALESCE(event = ?, FALSE)', params: ['player.join'], seqs: [1, 6], ch: { sql: 'ifNull(event = ?, 0)', params: ['player.join'] } },
  { q: 'event:player.*', sql: `COALESCE(event ILIKE ? ${ESC}, FALSE)`, params: ['player.%'], seqs: [1, 5, 6], ch: { sql: `ifNull(${like('event')}, 0)`, params: ['player.%'] } },
  { q: 'source:eu', sql: `COALESCE(source ILIKE ? ${ESC}, FALSE)`, params: ['%eu%'], seqs: [1, 2, 6, 7], ch: { sql: `ifNull(${like('source')}, 0)`, params: ['%eu%'] } },
  { q: 'source:"eu*"', sql: `COALESCE(source ILIKE ? ${ESC}, FALSE)`, params: ['%eu*%'], seqs: [], ch: { sql: `ifNull(${like('source')}, 0)`, params: ['%eu*%'] } },
  { q: 'source !: eu', sql: `COALESCE(NOT (source ILIKE ? ${ESC}), FALSE)`, params: ['%eu%'], seqs: [3, 5], ch: { sql: `ifNull(NOT (${like('source')}), 0)`, params: ['%eu%'] } },
  { q: 'actor != alice', sql: 'COALESCE(actor <> ?, FALSE)', params: ['alice'], seqs: [2, 4, 5, 6, 7], ch: { sql: 'ifNull(actor <> ?, 0)', params: ['alice'] } },
  { q: 'actor exists', sql: '(actor IS NOT NULL)', params: [], seqs: [1, 2, 4, 5, 6, 7], ch: { sql: '(actor IS NOT NULL)', params: [] } },
  { q: 'NOT source exists', sql: '(NOT (source IS NOT NULL))', params: [], seqs: [4], ch: { sql: '(NOT (source IS NOT NULL))', params: [] } },
  { q: 'message:"50%_"', sql: `COALESCE(message ILIKE ? ${ESC}, FALSE)`, params: ['%50\\%\\_%'], seqs: [2], ch: { sql: `ifNull(${like('message')}, 0)`, params: ['%50\\%\\_%'] } },
  // ClickHouse 18.16 gets `<=` / `>=` wrong when a string is the other plus U+0000: NOT `>` / `<`
  { q: 'event <= crash', sql: 'COALESCE(event <= ?, FALSE)', params: ['crash'], seqs: [4], ch: { sql: 'ifNull(NOT (event > ?), 0)', params: ['crash'] } },
  // ClickHouse 18.16's LIKE misreads some patterns holding U+0000: those get a constant first character
  {
    q: 'message:"\u0000"', sql: `COALESCE(message ILIKE ? ${ESC}, FALSE)`, params: ['%\u0000%'], seqs: [],
    ch: { sql: `ifNull(concat('x', ${fold('message')}) LIKE concat('x', ${fold('?')}), 0)`, params: ['%\u0000%'] },
  },
  { q: 'event > m', sql: 'COALESCE(event > ?, FALSE)', params: ['m'], seqs: [1, 2, 5, 6, 7], ch: { sql: 'ifNull(event > ?, 0)', params: ['m'] } },

  // free text: the message contains it
  { q: '"connection lost"', sql: `COALESCE(message ILIKE ? ${ESC}, FALSE)`, params: ['%connection lost%'], seqs: [1, 5], ch: { sql: `ifNull(${like('message')}, 0)`, params: ['%connection lost%'] } },

  // times: relative ones resolve against `now`, absolute ones are epoch milliseconds
  { q: 'ts >= now-15m', sql: '(ts >= CAST(? AS BIGINT))', params: [NOW - 15 * min], seqs: [1, 5, 6], ch: { sql: '(ts >= ?)', params: [NOW - 15 * min] } },
  { q: 'ts < -1h', sql: '(ts < CAST(? AS BIGINT))', params: [NOW - hour], seqs: [3, 4], ch: { sql: '(ts < ?)', params: [NOW - hour] } },
  { q: 'ingested_at <= 2024-05-01T11:00:00Z', sql: '(ingested_at <= CAST(? AS BIGINT))', params: [NOW - hour], seqs: [3, 4], ch: { sql: '(ingested_at <= ?)', params: [NOW - hour] } },
  { q: 'ts == 2024-05-01T13:55:00+02:00', sql: '(ts = CAST(? AS BIGINT))', params: [NOW - 5 * min], seqs: [1], ch: { sql: '(ts = ?)', params: [NOW - 5 * min] } },

  // bytes_raw: numbers, sent as text and cast to DOUBLE
  { q: 'bytes_raw > 1e3', sql: '(bytes_raw > CAST(? AS DOUBLE))', params: ['1000'], seqs: [3, 4], ch: { sql: `(bytes_raw > ${F64})`, params: [h(1000)] } },
  { q: 'bytes_raw:120', sql: '(bytes_raw = CAST(? AS DOUBLE))', params: ['120'], seqs: [1], ch: { sql: `(bytes_raw = ${F64})`, params: [h(120)] } },

  // event_id
  { q: `event_id == ${uuid(3)}`, sql: '(event_id = CAST(? AS UUID))', params: [uuid(3)], seqs: [3], ch: { sql: '(event_id = ?)', params: [uuid(3)] } },
  { q: `event_id != ${uuid(3)}`, sql: '(event_id <> CAST(? AS UUID))', params: [uuid(3)], seqs: [1, 2, 4, 5, 6, 7], ch: { sql: '(event_id <> ?)', params: [uuid(3)] } },

  // dataset names resolve to the tenant's dataset ids
  { q: 'dataset:GAME', sql: '(dataset_id IN (?))', params: ['ds_game'], seqs: [1, 4, 6], ch: { sql: '(dataset_id IN (?))', params: ['ds_game'] } },
  { q: 'dataset != game', sql: '(NOT dataset_id IN (?))', params: ['ds_game'], seqs: [2, 3, 5, 7], ch: { sql: '(NOT dataset_id IN (?))', params: ['ds_game'] } },
  { q: 'dataset in (auth, matchmaking)', sql: '((dataset_id IN (?)) OR (dataset_id IN (?)))', params: ['ds_auth', 'ds_mm'], seqs: [2, 3, 5, 7], ch: { sql: '((dataset_id IN (?)) OR (dataset_id IN (?)))', params: ['ds_auth', 'ds_mm'] } },
  { q: 'dataset > game', sql: '(dataset_id IN (?))', params: ['ds_mm'], seqs: [2, 7], ch: { sql: '(dataset_id IN (?))', params: ['ds_mm'] } },

  // payload paths: a JSON pointer parameter per JSON function; one branch per JSON type
  {
    q: 'payload.ping >= 150',
    sql: `COALESCE((${type} = 'VARCHAR' AND ${str} >= ?) OR (${num} >= CAST(? AS DOUBLE)), FALSE)`,
    params: ['/ping', '/ping', '150', '/ping', '150'],
    seqs: [1, 2, 3], // 2's ping is the string "150": text, and "150" >= "150"
    ch: {
      sql: `((${T} = 1 AND NOT (${S} < ?)) OR (${T} = 2 AND ${N} >= ${F64}))`, // `>=` on text is NOT `<` (18.16 bug)
      params: ['/ping', '/ping', '150', '/ping', '/ping', h(150)],
    },
  },
  {
    q: 'payload.ping == "150"',
    sql: `COALESCE((${type} = 'VARCHAR' AND ${str} = ?), FALSE)`,
    params: ['/ping', '/ping', '150'],
    seqs: [2],
    ch: { sql: `(${T} = 1 AND ${S} = ?)`, params: ['/ping', '/ping', '150'] },
  },
  {
    q: 'payload.ping:150',
    sql: `COALESCE((${type} = 'VARCHAR' AND ${str} ILIKE ? ${ESC}) OR (${num} = CAST(? AS DOUBLE)), FALSE)`,
    params: ['/ping', '/ping', '%150%', '/ping', '150'],
    seqs: [1, 2],
    ch: {
      sql: `((${T} = 1 AND ${like(S)}) OR (${T} = 2 AND ${N} = ${F64}))`,
      params: ['/ping', '/ping', '%150%', '/ping', '/ping', h(150)],
    },
  },
  {
    q: 'payload.region:eu*',
    sql: `COALESCE((${type} = 'VARCHAR' AND ${str} ILIKE ? ${ESC}), FALSE)`,
    params: ['/region', '/region', 'eu%'],
    seqs: [1, 2, 6],
    ch: { sql: `(${T} = 1 AND ${like(S)})`, params: ['/region', '/region', 'eu%'] },
  },
  {
    q: 'payload.ok == true',
    sql: `COALESCE((${type} = 'VARCHAR' AND ${str} = ?) OR (${type} = 'BOOLEAN' AND ${str} = ?), FALSE)`,
    params: ['/ok', '/ok', 'true', '/ok', '/ok', 'true'],
    seqs: [1],
    ch: { sql: `((${T} = 1 AND ${S} = ?) OR (${T} = 3 AND ${S} = ?))`, params: ['/ok', '/ok', 'true', '/ok', '/ok', 'true'] },
  },
  {
    q: 'payload.n == null',
    sql: `COALESCE((${type} = 'VARCHAR' AND ${str} = ?) OR (${type} = 'NULL'), FALSE)`,
    params: ['/n', '/n', 'null', '/n'],
    seqs: [2],
    ch: { sql: `((${T} = 1 AND ${S} = ?) OR (${T} = 4))`, params: ['/n', '/n', 'null', '/n'] },
  },
  {
    q: 'payload.map != dust',
    sql: `(${type} IS NOT NULL AND NOT COALESCE((${type} = 'VARCHAR' AND ${str} = ?), FALSE))`,
    params: ['/map', '/map', '/map', 'dust'],
    seqs: [2, 5],
    ch: { sql: `(has(payload_paths, ?) AND NOT (${T} = 1 AND ${S} = ?))`, params: ['/map', '/map', '/map', 'dust'] },
  },
  {
    q: 'payload.map !: U',
    sql: `(${type} IS NOT NULL AND NOT COALESCE((${type} = 'VARCHAR' AND ${str} ILIKE ? ${ESC}), FALSE))`,
    params: ['/map', '/map', '/map', '%U%'],
    seqs: [5],
    ch: { sql: `(has(payload_paths, ?) AND NOT (${T} = 1 AND ${like(S)}))`, params: ['/map', '/map', '/map', '%U%'] },
  },
  {
    q: 'payload.tags.0 == a',
    sql: `COALESCE((${type} = 'VARCHAR' AND ${str} = ?), FALSE)`,
    params: ['/tags/0', '/tags/0', 'a'],
    seqs: [1],
    ch: { sql: `(${T} = 1 AND ${S} = ?)`, params: ['/tags/0', '/tags/0', 'a'] },
  },
  { q: 'payload.`a.b` exists', sql: `(${type} IS NOT NULL)`, params: ['/a.b'], seqs: [3], ch: { sql: 'has(payload_paths, ?)', params: ['/a.b'] } },
  { q: 'NOT payload.map exists', sql: `(NOT (${type} IS NOT NULL))`, params: ['/map'], seqs: [3, 4, 7], ch: { sql: '(NOT has(payload_paths, ?))', params: ['/map'] } },
  {
    // a bare key is a payload key; `~` and `/` are escaped in the pointer (RFC 6901)
    q: '`x y` == 1 OR payload.`~/k`:T',
    sql:
      `(COALESCE((${type} = 'VARCHAR' AND ${str} = ?) OR (${num} = CAST(? AS DOUBLE)), FALSE)` +
      ` OR COALESCE((${type} = 'VARCHAR' AND ${str} ILIKE ? ${ESC}), FALSE))`,
    params: ['/x y', '/x y', '1', '/x y', '1', '/~0~1k', '/~0~1k', '%T%'],
    seqs: [3],
    ch: {
      sql: `(((${T} = 1 AND ${S} = ?) OR (${T} = 2 AND ${N} = ${F64})) OR (${T} = 1 AND ${like(S)}))`,
      params: ['/x y', '/x y', '1', '/x y', '/x y', h(1), '/~0~1k', '/~0~1k', '%T%'],
    },
  },
  {
    q: 'region in (us, eu)',
    sql: `(COALESCE((${type} = 'VARCHAR' AND ${str} = ?), FALSE) OR COALESCE((${type} = 'VARCHAR' AND ${str} = ?), FALSE))`,
    params: ['/region', '/region', 'us', '/region', '/region', 'eu'],
    seqs: [5, 6],
    ch: { sql: `((${T} = 1 AND ${S} = ?) OR (${T} = 1 AND ${S} = ?))`, params: ['/region', '/region', 'us', '/region', '/region', 'eu'] },
  },

  // not / and / or
  {
    q: '(event:player.join OR event:player.leave) AND NOT actor:bot-*',
    sql: `((COALESCE(event ILIKE ? ${ESC}, FALSE) OR COALESCE(event ILIKE ? ${ESC}, FALSE)) AND (NOT COALESCE(actor ILIKE ? ${ESC}, FALSE)))`,
    params: ['%player.join%', '%player.leave%', 'bot-%'],
    seqs: [1, 5, 6],
    ch: {
      sql: `((ifNull(${like('event')}, 0) OR ifNull(${like('event')}, 0)) AND (NOT ifNull(${like('actor')}, 0)))`,
      params: ['%player.join%', '%player.leave%', 'bot-%'],
    },
  },
  {
    q: 'NOT (severity >= error OR source:srv*)',
    sql: `(NOT ((severity >= ?) OR COALESCE(source ILIKE ? ${ESC}, FALSE)))`,
    params: [3, 'srv%'],
    seqs: [1, 6],
    ch: { sql: `(NOT ((severity >= ?) OR ifNull(${like('source')}, 0)))`, params: [3, 'srv%'] },
  },

  // group by: canonical fields decode to names, ISO times, numbers; payload values as JSON values
  {
    q: 'severity >= warn group by source',
    sql: '(severity >= ?)', params: [2], seqs: [2, 3, 4, 6],
    key: { sql: 'source', params: [] },
    groups: [['EU-WEST-1a', 1], ['srv-eu-1', 1], ['us-east-1', 1], [null, 1]],
    ch: { sql: '(severity >= ?)', params: [2], key: { sql: 'source', params: [] } },
  },
  {
    q: 'group by dataset',
    sql: 'TRUE', params: [], seqs: [1, 2, 3, 4, 5, 6, 7],
    key: { sql: 'dataset_id', params: [] },
    groups: [['game', 3], ['auth', 2], ['matchmaking', 2]],
    ch: { sql: '1', params: [], key: { sql: 'dataset_id', params: [] } },
  },
  {
    q: 'group by severity',
    sql: 'TRUE', params: [], seqs: [1, 2, 3, 4, 5, 6, 7],
    key: { sql: 'severity', params: [] },
    groups: [['info', 2], ['warn', 2], ['debug', 1], ['error', 1], ['fatal', 1]],
    ch: { sql: '1', params: [], key: { sql: 'severity', params: [] } },
  },
  {
    q: 'ts >= now-15m group by ts',
    sql: '(ts >= CAST(? AS BIGINT))', params: [NOW - 15 * min], seqs: [1, 5, 6],
    key: { sql: 'ts', params: [] },
    groups: [[iso(NOW - 10 * min), 1], [iso(NOW - 5 * min), 1], [iso(NOW + min), 1]],
    ch: { sql: '(ts >= ?)', params: [NOW - 15 * min], key: { sql: 'ts', params: [] } },
  },
  {
    q: 'bytes_raw < 200 group by bytes_raw',
    sql: '(bytes_raw < CAST(? AS DOUBLE))', params: ['200'], seqs: [1, 5, 7],
    key: { sql: 'bytes_raw', params: [] },
    groups: [[0, 1], [100, 1], [120, 1]],
    ch: { sql: `(bytes_raw < ${F64})`, params: [h(200)], key: { sql: 'bytes_raw', params: [] } },
  },
  {
    q: 'payload.map:dust group by event_id',
    sql: `COALESCE((${type} = 'VARCHAR' AND ${str} ILIKE ? ${ESC}), FALSE)`, params: ['/map', '/map', '%dust%'], seqs: [1, 6],
    key: { sql: 'CAST(event_id AS VARCHAR)', params: [] },
    groups: [[uuid(1), 1], [uuid(6), 1]],
    ch: { sql: `(${T} = 1 AND ${like(S)})`, params: ['/map', '/map', '%dust%'], key: { sql: 'event_id', params: [] } },
  },
  {
    q: 'group by payload.map',
    sql: 'TRUE', params: [], seqs: [1, 2, 3, 4, 5, 6, 7],
    key: { sql: payloadKey, params: ['/map'] },
    groups: [[null, 3], ['dust', 2], ['inferno', 1], ['nuke', 1]],
    ch: { sql: '1', params: [], key: { sql: chPayloadKey, params: ['/map'] } },
  },
  {
    // 150 and "150" are two groups; ties order by the key's JSON text
    q: 'group by payload.ping',
    sql: 'TRUE', params: [], seqs: [1, 2, 3, 4, 5, 6, 7],
    key: { sql: payloadKey, params: ['/ping'] },
    groups: [[null, 2], ['150', 1], [-3, 1], [150, 1], [20.5, 1], [300, 1]],
    ch: { sql: '1', params: [], key: { sql: chPayloadKey, params: ['/ping'] } },
  },
  {
    q: 'dataset == game group by payload.meta',
    sql: '(dataset_id IN (?))', params: ['ds_game'], seqs: [1, 4, 6],
    key: { sql: payloadKey, params: ['/meta'] },
    groups: [[null, 2], [{ ver: '1.2' }, 1]],
    ch: { sql: '(dataset_id IN (?))', params: ['ds_game'], key: { sql: chPayloadKey, params: ['/meta'] } },
  },
];

const idToName = new Map([...DATASET_IDS].map(([name, id]) => [id, name]));

let con: DuckDBConnection;
before(async () => {
  con = await openEventsDb();
  await loadEvents(con, EVENTS);
});
after(() => con.closeSync());

describe('SQL text of the production compiler, and what it selects on the production table', () => {
  for (const c of TABLE) {
    test(c.q || '(empty query)', async () => {
      const query = parseSoql(c.q);
      const ctx = { now: NOW, datasetIds: DATASET_IDS };
      const filter = compileDuckDbFilter(query, ctx);
      assert.deepEqual(filter, { where: c.sql, params: c.params }, 'filter SQL');
      const chFilter = compileClickHouseFilter(query, ctx);
      assert.deepEqual(chFilter, { where: c.ch.sql, params: c.ch.params }, 'ClickHouse filter SQL');
      assert.deepEqual(compileFilter(query, ctx, 'duckdb'), filter, 'dispatch: DuckDB');
      assert.deepEqual(compileFilter(query, ctx, 'clickhouse'), chFilter, 'dispatch: ClickHouse');
      assert.equal(query.groupBy !== null, c.ch.key !== undefined, 'a ClickHouse key exactly for a group by query');
      if (query.groupBy) {
        assert.deepEqual(compileClickHouseGroupKey(query.groupBy), c.ch.key, 'ClickHouse group key SQL');
        assert.deepEqual(compileGroupKey(query.groupBy, 'clickhouse'), c.ch.key, 'dispatch: ClickHouse key');
        assert.deepEqual(compileGroupKey(query.groupBy, 'duckdb'), compileDuckDbGroupKey(query.groupBy), 'dispatch: DuckDB key');
      }
      assert.deepEqual(EVENTS.filter(compilePredicate(query, { now: NOW })).map((e) => e.seq), c.seqs, 'in-memory predicate');
      assert.deepEqual(await selectSeqs(con, filter.where, filter.params), c.seqs, 'DuckDB');

      assert.equal(query.groupBy !== null, c.key !== undefined, 'a key and groups exactly for a group by query');
      if (!query.groupBy || !c.key || !c.groups) return;
      const key = compileDuckDbGroupKey(query.groupBy);
      assert.deepEqual(key, c.key, 'group key SQL');
      const rows = await selectGroups(con, key, filter.where, filter.params);
      assert.deepEqual(rows.map(([raw, n]) => [decodeGroupValue(query.groupBy!, raw, idToName), n]), c.groups, 'groups');
      assert.equal(rows.reduce((sum, [, n]) => sum + n, 0), c.seqs.length, 'the groups count the selected events');
    });
  }
});

test('dialectFalse: FALSE on DuckDB, 0 on ClickHouse (18.16 has no FALSE)', () => {
  assert.equal(dialectFalse('duckdb'), 'FALSE');
  assert.equal(dialectFalse('clickhouse'), '0');
});

test('the table covers every operator and field of SOQL.md', () => {
  const seen = new Set<string>();
  const visit = (e: Expr): void => {
    seen.add(e.type);
    switch (e.type) {
      case 'and':
      case 'or':
        e.items.forEach(visit);
        return;
      case 'not':
        visit(e.expr);
        return;
      case 'compare':
        seen.add(`op ${e.op}`);
        if (e.value.type === 'time') seen.add(`time ${e.value.time.kind}`);
        if (e.value.type === 'text' && e.field.kind === 'payload') seen.add(e.value.quoted ? 'payload quoted' : 'payload bare');
        if (e.value.type === 'text' && !e.value.quoted && e.value.text.includes('*')) seen.add('wildcard');
        seen.add(`field ${e.field.kind === 'payload' ? 'payload' : e.field.name}`);
        return;
      case 'in':
      case 'exists':
        seen.add(`field ${e.field.kind === 'payload' ? 'payload' : e.field.name}`);
        seen.add(`${e.type} ${e.field.kind}`);
        return;
      case 'freetext':
        return;
    }
  };
  for (const { q } of TABLE) {
    const query = parseSoql(q);
    if (query.filter) visit(query.filter);
    if (query.groupBy) seen.add(`group by ${query.groupBy.kind === 'payload' ? 'payload' : query.groupBy.name}`);
  }
  const wanted = [
    'and', 'or', 'not', 'freetext', 'in canonical', 'in payload', 'exists canonical', 'exists payload', 'wildcard',
    'op :', 'op !:', 'op ==', 'op !=', 'op >', 'op >=', 'op <', 'op <=', 'time relative', 'time absolute',
    'payload quoted', 'payload bare',
    ...['ts', 'ingested_at', 'dataset', 'severity', 'event', 'actor', 'source', 'message', 'event_id', 'bytes_raw', 'payload'].map((f) => `field ${f}`),
    ...['dataset', 'severity', 'source', 'ts', 'bytes_raw', 'event_id', 'payload'].map((f) => `group by ${f}`),
  ];
  assert.deepEqual(wanted.filter((w) => !seen.has(w)), []);
});

describe('a payload DuckDB cannot read', () => {
  test('is in the fixtures: DuckDB refuses it without TRY', async () => {
    await assert.rejects(
      con.runAndReadAll('SELECT json_type(payload, ?) FROM events WHERE tenant = ? AND seq = 7', ['/map', TENANT]),
      /Malformed JSON/,
    );
  });

  test('is recognised from its JSON text as ingest writes it', () => {
    for (const payload of [{ a: '\ud800' }, { a: 'x\udc00' }, { '\udbff': 1 }, { a: ['\\', '\ud800'] }]) {
      assert.ok(duckDbCannotRead(JSON.stringify(payload)), JSON.stringify(payload));
    }
    for (const payload of [{ a: '😀' }, { a: '\\ud800' }, { a: '\\\\ud800' }, { a: '\u0000' }, {}]) {
      assert.ok(!duckDbCannotRead(JSON.stringify(payload)), JSON.stringify(payload));
    }
  });

  test('reads as empty in live tail too (a stored event, payload as JSON text)', () => {
    const stored = (payloadJson: string): StoredEvent => ({
      seq: 7, event_id: uuid(7), ts: NOW, ingested_at: NOW, dataset: 'game', severity: 1, event: 'e', actor: null, source: null,
      message: '', payloadJson, bytes_raw: 1,
    });
    const exists = compilePredicate(parseSoql('payload.ping exists'), { now: NOW });
    assert.equal(exists(stored('{"ping":1}')), true);
    assert.equal(exists(stored(JSON.stringify({ ping: 1, map: '\ud800' }))), false);
    assert.equal(exists(stored(JSON.stringify({ ping: 1, map: '\\ud800' }))), true);
  });
});
