// Reads an NDJSON file as a stream, in batches of numbered lines, so that an import of a
// million lines holds one batch of text at a time instead of the whole file (a 200,000-line
// file read whole took 577 to 584 MB resident).
import { createHash } from "node:crypto";
import { open } from "node:fs/promises";
import { invalidParameter } from "../errors/errors.js";

/** Where the lines come from: a file, or text already in memory (tests, small imports). */
export interface NdjsonSource {
  /** How messages name it: the file's path as given, or "The input" for text. */
  readonly name: string;
  /** Bytes in all, for the progress of the first pass. */
  readonly size: number;
  /** The bytes from the start, in pieces; each call starts again. */
  read(): AsyncIterable<Uint8Array>;
}

export interface RawLine {
  /** 1-based, counting blank lines, as an editor shows it. */
  line: number;
  text: string;
}

const PIECE_BYTES = 64 * 1024;

export function textSource(text: string): NdjsonSource {
  const bytes = Buffer.from(text, "utf8");
  return {
    name: "The input",
    size: bytes.length,
    async *read() {
      for (let at = 0; at < bytes.length; at += PIECE_BYTES) yield bytes.subarray(at, at + PIECE_BYTES);
    },
  };
}

function cannotRead(path: string, error: unknown): Error {
  const reason = (error as NodeJS.ErrnoException).code ?? String(error);
  return invalidParameter("FILE", `Cannot read ${path}: ${reason}.`);
}

/** The file at `path`; an error naming it when it cannot be opened or read. */
export async function fileSource(path: string): Promise<NdjsonSource> {
  let size: number;
  try {
    const handle = await open(path, "r");
    try {
      size = (await handle.stat()).size;
    } finally {
      await handle.close();
    }
  } catch (error) {
    throw cannotRead(path, error);
  }
  return {
    name: path,
    size,
    async *read() {
      let handle: Awaited<ReturnType<typeof open>>;
      try {
        handle = await open(path, "r");
      } catch (error) {
        throw cannotRead(path, error);
      }
      try {
        for await (const piece of handle.createReadStream({ highWaterMark: PIECE_BYTES, autoClose: false })) yield piece as Buffer;
      } catch (error) {
        throw cannotRead(path, error);
      } finally {
        await handle.close();
      }
    },
  };
}

/**
 * One pass over a source: its non-blank lines in batches, and as it goes the lines and
 * bytes read and a digest of the bytes, by which a second pass knows it read the same file.
 */
export class LinePass {
  lines = 0;
  bytes = 0;
  private readonly hash = createHash("sha256");

  constructor(private readonly source: NdjsonSource) {}

  async *batches(size: number): AsyncGenerator<RawLine[]> {
    // Invalid UTF-8 becomes U+FFFD, as readFile(…, "utf8") did; a leading BOM is dropped.
    const decoder = new TextDecoder("utf-8");
    let rest = "";
    let batch: RawLine[] = [];
    const take = (raw: string) => {
      this.lines += 1;
      const text = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
      if (text.trim() !== "") batch.push({ line: this.lines, text });
    };
    for await (const piece of this.source.read()) {
      this.hash.update(piece);
      this.bytes += piece.length;
      const text = rest + decoder.decode(piece, { stream: true });
      let start = 0;
      for (let end = text.indexOf("\n"); end !== -1; end = text.indexOf("\n", start)) {
        take(text.slice(start, end));
        start = end + 1;
        if (batch.length >= size) {
          yield batch;
          batch = [];
        }
      }
      rest = text.slice(start);
    }
    rest += decoder.decode();
    if (rest !== "") take(rest);
    if (batch.length > 0) yield batch;
  }

  /** The digest of every byte read; complete once the batches are exhausted. */
  digest(): string {
    return this.hash.copy().digest("hex");
  }
}
