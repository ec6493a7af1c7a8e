// The file format both laptop-side hash caches share (./hash-cache.ts, ./index-hashes.ts): a header line
// naming the format, then one record a line. New records are appended; the file is written whole (under a
// name of its own, then renamed over the old one) when its caller says so. Neither reading nor writing
// ever throws: a cache that cannot be read or written only costs the hashing it would have saved.
import { appendFileSync, mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Reads `file`: when its first line is `format`, each later line goes to `take`, which says whether it
 * was a record (a torn or foreign line is skipped). `valid`: the header was found; `records`: how many.
 */
export function readRecords(file: string, format: string, take: (line: string) => boolean): { valid: boolean; records: number } {
  let records = 0;
  try {
    const text = readFileSync(file, 'utf8').split('\n');
    if (text[0] !== format) return { valid: false, records: 0 };
    for (let i = 1; i < text.length; i++) if (take(text[i]!)) records++;
    return { valid: true, records };
  } catch {
    // No file yet, or one that cannot be read.
    return { valid: false, records: 0 };
  }
}

/** Appends `lines` (each ending in a newline) to `file`. */
export function appendRecords(file: string, lines: readonly string[]): void {
  if (lines.length === 0) return;
  try {
    appendFileSync(file, lines.join(''));
  } catch {
    // A read-only git directory or a full disk.
  }
}

/** Writes `file` whole: the header, then `lines` (each ending in a newline). */
export function rewriteRecords(file: string, format: string, lines: readonly string[]): void {
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(tmp, `${format}\n${lines.join('')}`);
    renameSync(tmp, file);
  } catch {
    try {
      unlinkSync(tmp);
    } catch {
      // never written
    }
  }
}
