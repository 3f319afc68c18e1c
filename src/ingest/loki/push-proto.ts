import protobuf from 'protobufjs';

/**
 * Loki's push API message, `logproto.PushRequest`, as grafana/loki's pkg/push/push.proto
 * defines it (field numbers and types; the gogoproto options only shape Go code and are left
 * out). protobufjs builds the decoder from this text; google.protobuf.Timestamp is its own copy.
 */
export const pushProto = `syntax = "proto3";
package logproto;
import "google/protobuf/timestamp.proto";

message PushRequest {
  repeated StreamAdapter streams = 1;
}
message PushResponse {}
message StreamAdapter {
  string labels = 1;
  repeated EntryAdapter entries = 2;
  uint64 hash = 3;
}
message LabelPairAdapter {
  string name = 1;
  string value = 2;
}
message EntryAdapter {
  google.protobuf.Timestamp timestamp = 1;
  string line = 2;
  repeated LabelPairAdapter structuredMetadata = 3;
  repeated LabelPairAdapter parsed = 4;
}
`;

export const pushRoot = new protobuf.Root();
protobuf.parse(pushProto, pushRoot, { keepCase: true });
pushRoot.add(protobuf.Root.fromJSON(protobuf.common.get('google/protobuf/timestamp.proto')!).lookup('google')!);
pushRoot.resolveAll();
export const PushRequest = pushRoot.lookupType('logproto.PushRequest');
const EntryAdapter = pushRoot.lookupType('logproto.EntryAdapter');

/** Decoded shapes (protobufjs message objects; int64 as a Long or a number). */
interface Int64Like {
  toString(): string;
  toNumber(): number;
}
export interface DecodedEntry {
  timestamp?: { seconds?: number | Int64Like; nanos?: number } | null;
  line?: string;
  structuredMetadata?: Array<{ name?: string; value?: string }>;
}
export interface DecodedStream {
  labels?: string;
  entries?: DecodedEntry[];
}

export class TooManyEntries extends Error {}

/** Entries the decode in progress may still make (decoding is synchronous: one at a time). */
let entriesLeft = Infinity;

// The parent's generated decoder calls EntryAdapter's through the resolved type, so wrapping it
// counts every entry as it is made: the 10,001st stops the decode, before a 10 MB body of empty
// entries could become millions of objects.
EntryAdapter.setup();
const entryDecode = EntryAdapter.decode.bind(EntryAdapter);
EntryAdapter.decode = ((reader: protobuf.Reader | Uint8Array, length?: number) => {
  if (--entriesLeft < 0) throw new TooManyEntries();
  return entryDecode(reader, length);
}) as typeof EntryAdapter.decode;

/** Binary PushRequest → its streams; throws TooManyEntries past `maxEntries`, protobufjs's errors on bad bytes. */
export function decodePushRequest(body: Uint8Array, maxEntries: number): DecodedStream[] {
  entriesLeft = maxEntries;
  try {
    return (PushRequest.decode(body) as unknown as { streams?: DecodedStream[] }).streams ?? [];
  } finally {
    entriesLeft = Infinity;
  }
}
