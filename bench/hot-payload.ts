// The 8-key payload of the hot-key benches, shared by bench/hot-keys-load.ts (the
// loader alone) and bench/ingest-hot.ts (the whole write path): map, ping, round, region,
// ranked, weapon and two identifier-like strings (player_id, steam_id: a distinct value nearly
// every event) — or, with `lowCardinality`, strings of as many bytes and few values (server,
// patch), so all 8 keys are ones discovery chooses (events/hot-keys.ts).
const maps = ['dust2', 'inferno', 'mirage', 'nuke', 'overpass', 'vertigo', 'ancient'];
const weapons = ['ak47', 'm4a1', 'awp', 'deagle', 'mp9', 'famas'];

/** The payload of the `n`th event. */
export function hotPayload(n: number, lowCardinality: boolean): Record<string, unknown> {
  return {
    map: maps[n % maps.length],
    ping: (n * 13) % 250,
    ...(lowCardinality ? { server: `eu-west-srv-${String(n % 40).padStart(2, '0')}` } : { player_id: `p_${String((n * 7919) % 50000).padStart(10, '0')}` }),
    round: n % 30,
    region: `eu-${n % 4}`,
    ranked: n % 3 === 0,
    weapon: weapons[n % weapons.length],
    ...(lowCardinality ? { patch: `1.38.${n % 3}-hotfix-${n % 2}` } : { steam_id: `7656119${String((n * 104729) % 1e10).padStart(10, '0')}` }),
  };
}

/** Its 8 keys with their types, as `PATCH /datasets/{name}` pins them. */
export function hotPayloadKeys(lowCardinality: boolean): Array<{ key: string; type: 'string' | 'number' | 'boolean' }> {
  return [
    { key: 'map', type: 'string' },
    { key: 'ping', type: 'number' },
    { key: lowCardinality ? 'server' : 'player_id', type: 'string' },
    { key: 'round', type: 'number' },
    { key: 'region', type: 'string' },
    { key: 'ranked', type: 'boolean' },
    { key: 'weapon', type: 'string' },
    { key: lowCardinality ? 'patch' : 'steam_id', type: 'string' },
  ];
}
