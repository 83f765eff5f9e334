/**
 * Whether a file can be a whole GGUF model, read from its header without llama.cpp: the magic,
 * the version, and the end of the last tensor's data against the file's size. A download cut
 * short ends before its tensors do; a proxy's login page starts `<!DOCTYPE`; llama.cpp refuses
 * both only once a command has loaded node-llama-cpp and asked for the model, and its words
 * (`Invalid GGUF magic`, `tensor data is not within the file bounds`) name neither the file nor
 * what to do. This says both before the file takes the model's name (`model-download.ts`) and
 * when a cached file is about to be used (`model-file.ts`).
 *
 * The format (ggml's `gguf.h`, v2 and v3): `GGUF`, version u32, tensor count u64, metadata count
 * u64, the metadata (key string, type u32, value), the tensor infos (name, dimensions, ggml
 * type, offset), padding to `general.alignment` (32 unless said), then the tensors' data. A
 * tensor's bytes are its rows' elements over the type's block size times the block's bytes
 * (`ggml_nbytes`); llama.cpp's loader refuses a file shorter than data start + offset + bytes
 * of any tensor, and so does this. Only the header is read (metadata arrays are skipped, not
 * read: a 262k-token vocabulary is a few MB of header), in 1 MiB reads.
 */
import { type FileHandle, open } from 'node:fs/promises';

/**
 * ggml type id → [elements per block, bytes per block], printed from `ggml-common.h` of the
 * llama.cpp that node-llama-cpp 3.21.1 ships (`llama/gitRelease.bundle`: `sizeof(block_*)`
 * and the `QK*` constants, compiled with gcc). A type not listed (a newer one) is not judged:
 * its tensor counts one byte, so the check can only err towards accepting a file.
 */
const GGML_TYPES: Readonly<Record<number, readonly [block: number, bytes: number]>> = {
  0: [1, 4], // F32
  1: [1, 2], // F16
  2: [32, 18], // Q4_0
  3: [32, 20], // Q4_1
  6: [32, 22], // Q5_0
  7: [32, 24], // Q5_1
  8: [32, 34], // Q8_0
  9: [32, 36], // Q8_1
  10: [256, 84], // Q2_K
  11: [256, 110], // Q3_K
  12: [256, 144], // Q4_K
  13: [256, 176], // Q5_K
  14: [256, 210], // Q6_K
  15: [256, 292], // Q8_K
  16: [256, 66], // IQ2_XXS
  17: [256, 74], // IQ2_XS
  18: [256, 98], // IQ3_XXS
  19: [256, 50], // IQ1_S
  20: [32, 18], // IQ4_NL
  21: [256, 110], // IQ3_S
  22: [256, 82], // IQ2_S
  23: [256, 136], // IQ4_XS
  24: [1, 1], // I8
  25: [1, 2], // I16
  26: [1, 4], // I32
  27: [1, 8], // I64
  28: [1, 8], // F64
  29: [256, 56], // IQ1_M
  30: [1, 2], // BF16
  34: [256, 54], // TQ1_0
  35: [256, 66], // TQ2_0
  39: [32, 17], // MXFP4
  40: [64, 36], // NVFP4
  41: [128, 18], // Q1_0
  42: [64, 18], // Q2_0
};

/** Byte sizes of the fixed-size metadata value types (gguf.h `gguf_type`); 8 string, 9 array. */
const VALUE_BYTES: Readonly<Record<number, number>> = {
  0: 1,
  1: 1,
  2: 2,
  3: 2,
  4: 4,
  5: 4,
  6: 4,
  7: 1,
  10: 8,
  11: 8,
  12: 8,
};

/** Far beyond any model (llama.cpp's largest have a few thousand tensors and under 100 keys). */
const MAX_COUNT = 10_000_000n;
const CHUNK = 1 << 20;

/** What the first bytes of a file that is not a model look like: `"<!DO"`, or hex for binary. */
export function describeStart(head: Uint8Array): string {
  const text = Buffer.from(head.subarray(0, 4)).toString('latin1');
  return /^[\x20-\x7e]{1,4}$/.test(text) ? `"${text}"` : `0x${Buffer.from(head.subarray(0, 4)).toString('hex')}`;
}

/** Whether the first bytes are those of a web page (a proxy's, a captive portal's, a login form). */
export function looksLikeHtml(head: Uint8Array): boolean {
  const text = Buffer.from(head.subarray(0, 512)).toString('latin1').trimStart().toLowerCase();
  return (
    text.startsWith('<!doctype') || text.startsWith('<html') || text.startsWith('<head') || text.startsWith('<?xml')
  );
}

/** Why `head` (a file's first bytes, at least 4) cannot start a GGUF model; undefined when it can. */
export function magicProblem(head: Uint8Array): string | undefined {
  if (head.length >= 4 && Buffer.from(head.subarray(0, 4)).toString('latin1') === 'GGUF') return undefined;
  if (looksLikeHtml(head)) return 'it is a web page (HTML), not a GGUF model';
  return `it is not a GGUF model (it starts with ${describeStart(head)}, not "GGUF")`;
}

/**
 * Why `file` is not a whole GGUF model (one phrase: `it was cut short (208960 bytes, of the
 * 417920 its header describes)`, `it is a web page (HTML), not a GGUF model`), or undefined
 * when its header and size agree. Rejects only on I/O errors.
 */
export async function ggufProblem(file: string): Promise<string | undefined> {
  const handle = await open(file, 'r');
  try {
    const size = (await handle.stat()).size;
    const reader = new HeaderReader(handle, size);
    return await check(reader, size);
  } finally {
    await handle.close();
  }
}

async function check(reader: HeaderReader, size: number): Promise<string | undefined> {
  const head = await reader.peek(Math.min(512, size));
  if (head.length < 4) return `it is ${size} bytes long, too short to be a model`;
  const wrong = magicProblem(head);
  if (wrong !== undefined) return wrong;
  const cut = (what: string): string => `it was cut short (${size} bytes, ${what})`;
  try {
    await reader.skip(4);
    const version = await reader.u32();
    // Version 1 is long gone from llama.cpp; a newer one we cannot read: not ours to judge.
    if (version !== 2 && version !== 3) return undefined;
    const tensors = await reader.u64();
    const keys = await reader.u64();
    if (tensors > MAX_COUNT || keys > MAX_COUNT) return `it is not a GGUF model (its header claims ${tensors} tensors)`;
    let alignment = 32;
    for (let i = 0n; i < keys; i++) {
      const key = await reader.string();
      const type = await reader.u32();
      if (key === 'general.alignment' && type === 4) alignment = (await reader.u32()) || 32;
      else await reader.skipValue(type);
    }
    let end = 0;
    for (let i = 0n; i < tensors; i++) {
      await reader.skipString();
      const dims = await reader.u32();
      if (dims > 8) return 'it is not a GGUF model (a tensor with more than 8 dimensions)';
      let elements = 1;
      let rows = 1;
      for (let d = 0; d < dims; d++) {
        const n = Number(await reader.u64());
        if (d === 0) elements = n;
        else rows *= n;
      }
      const type = await reader.u32();
      const offset = Number(await reader.u64());
      const known = GGML_TYPES[type];
      const bytes = known === undefined ? 1 : Math.ceil(elements / known[0]) * known[1] * rows;
      end = Math.max(end, offset + bytes);
    }
    const dataStart = Math.ceil(reader.position / alignment) * alignment;
    if (tensors > 0n && dataStart + end > size) return cut(`of the ${dataStart + end} its header describes`);
    return undefined;
  } catch (error) {
    if (error instanceof EndOfFile) return cut('ending inside its header');
    if (error instanceof UnknownValueType) return undefined;
    throw error;
  }
}

class EndOfFile extends Error {}

/** Little-endian reads through a 1 MiB window; skips never read what they pass. */
class HeaderReader {
  #buffer = Buffer.alloc(0);
  #at = 0;
  position = 0;

  constructor(
    private readonly handle: FileHandle,
    private readonly size: number,
  ) {}

  async peek(n: number): Promise<Buffer> {
    await this.#fill(n);
    return this.#buffer.subarray(this.position - this.#at, this.position - this.#at + n);
  }

  async u32(): Promise<number> {
    return (await this.#take(4)).readUInt32LE(0);
  }

  async u64(): Promise<bigint> {
    return (await this.#take(8)).readBigUInt64LE(0);
  }

  async string(): Promise<string> {
    const length = await this.#length();
    if (length <= 256) return (await this.#take(length)).toString('utf8');
    await this.skip(length); // no key is that long: skipped unread
    return '';
  }

  async skipString(): Promise<void> {
    await this.skip(await this.#length());
  }

  async skipValue(type: number): Promise<void> {
    if (type === 8) return this.skipString();
    if (type === 9) {
      const itemType = await this.u32();
      const count = await this.u64();
      if (count > MAX_COUNT * 10n) throw new EndOfFile();
      const fixed = VALUE_BYTES[itemType];
      if (fixed !== undefined) return this.skip(Number(count) * fixed);
      for (let i = 0n; i < count; i++) await this.skipValue(itemType);
      return;
    }
    const fixed = VALUE_BYTES[type];
    // An unknown type: the rest of the header cannot be read, so nothing more is judged.
    if (fixed === undefined) throw new UnknownValueType();
    await this.skip(fixed);
  }

  async skip(n: number): Promise<void> {
    if (this.position + n > this.size) throw new EndOfFile();
    this.position += n;
  }

  async #length(): Promise<number> {
    const length = await this.u64();
    if (length > BigInt(this.size)) throw new EndOfFile();
    return Number(length);
  }

  async #take(n: number): Promise<Buffer> {
    const bytes = await this.peek(n);
    if (bytes.length < n) throw new EndOfFile();
    this.position += n;
    return bytes;
  }

  async #fill(n: number): Promise<void> {
    const offset = this.position - this.#at;
    if (offset >= 0 && offset + n <= this.#buffer.length) return;
    const length = Math.min(Math.max(n, CHUNK), this.size - this.position);
    const buffer = Buffer.alloc(Math.max(0, length));
    const { bytesRead } = await this.handle.read(buffer, 0, buffer.length, this.position);
    this.#buffer = buffer.subarray(0, bytesRead);
    this.#at = this.position;
  }
}

class UnknownValueType extends Error {}
