import zlib from 'node:zlib';
import type { SupportedType } from '../../media/sniff.js';

/** Minimal valid files of every supported type, for tests (real headers, decodable content). */

function crc32(buf: Buffer): number {
  let crc = ~0;
  for (const byte of buf) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = (crc >>> 1) ^ (0xedb88320 & -(crc & 1));
  }
  return ~crc >>> 0;
}

const chunk = (type: string, data: Buffer) => {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
};

/** A 1×1 red PNG. */
export function png(): Buffer {
  const ihdr = Buffer.from([0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0, 0, 0]);
  const idat = zlib.deflateSync(Buffer.from([0, 255, 0, 0]));
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', idat), chunk('IEND', Buffer.alloc(0))]);
}

/** A 1×1 GIF89a. */
export const gif = () =>
  Buffer.from('474946383961010001008000000000ffffff21f90401000000002c00000000010001000002024401003b', 'hex');

/** A 1×1 baseline JPEG. */
export const jpeg = () =>
  Buffer.from(
    'ffd8ffe000104a46494600010100000100010000ffdb004300080606070605080707070909080a0c140d0c0b0b0c1912130f141d1a1f1e1d1a1c1c20242e2720222c231c1c2837292c30313434341f27393d38323c2e333432ffc0000b080001000101011100ffc4001f0000010501010101010100000000000000000102030405060708090a0bffc400b5100002010303020403050504040000017d01020300041105122131410613516107227114328191a1082342b1c11552d1f02433627282090a161718191a25262728292a3435363738393a434445464748494a535455565758595a636465666768696a737475767778797a838485868788898a92939495969798999aa2a3a4a5a6a7a8a9aab2b3b4b5b6b7b8b9bac2c3c4c5c6c7c8c9cad2d3d4d5d6d7d8d9dae1e2e3e4e5e6e7e8e9eaf1f2f3f4f5f6f7f8f9faffda0008010100003f00fbd3ffd9',
    'hex',
  );

/** A 1×1 lossless WebP. */
export const webp = () => Buffer.from('524946461a000000574542505650384c0d0000002f0000001007101111888808', 'hex');

/** An MP4 with ftyp (isom) and an empty moov box. */
export function mp4(): Buffer {
  const ftyp = Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypisom', 'latin1'), Buffer.from([0, 0, 2, 0]), Buffer.from('isomiso2', 'latin1')]);
  const moov = Buffer.concat([Buffer.from([0, 0, 0, 8]), Buffer.from('moov', 'latin1')]);
  return Buffer.concat([ftyp, moov]);
}

/** A WebM EBML header (DocType webm) followed by an empty Segment. */
export const webm = () =>
  Buffer.from('1a45dfa39f4286810142f7810142f2810442f381084282847765626d42878104428581021853806701ffffffffffffff', 'hex');

/** A one-page PDF. */
export const pdf = () =>
  Buffer.from(
    '%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 10 10]>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n',
    'latin1',
  );

export const samples: Record<SupportedType, () => Buffer> = {
  'image/png': png,
  'image/jpeg': jpeg,
  'image/gif': gif,
  'image/webp': webp,
  'video/mp4': mp4,
  'video/webm': webm,
  'application/pdf': pdf,
};

/** A file of `type` padded to exactly `size` bytes (the header stays valid for sniffing). */
export function sized(type: SupportedType, size: number): Buffer {
  const head = samples[type]();
  const out = Buffer.alloc(size);
  head.copy(out, 0, 0, Math.min(head.length, size));
  return out;
}

export interface Part {
  name: string;
  value: string | Buffer;
  filename?: string;
  /** undefined: no Content-Type header on the part at all */
  type?: string;
}

/** A multipart/form-data body built by hand, so tests control every part header. */
export function multipart(parts: Part[]): { body: Buffer; contentType: string } {
  const boundary = `----opsTest${Math.random().toString(16).slice(2)}`;
  const pieces: Buffer[] = [];
  for (const part of parts) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"`;
    if (part.filename !== undefined) head += `; filename="${part.filename}"`;
    head += '\r\n';
    if (part.type !== undefined) head += `Content-Type: ${part.type}\r\n`;
    pieces.push(Buffer.from(`${head}\r\n`, 'utf8'), Buffer.isBuffer(part.value) ? part.value : Buffer.from(part.value, 'utf8'), Buffer.from('\r\n'));
  }
  pieces.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(pieces), contentType: `multipart/form-data; boundary=${boundary}` };
}
