// The upstream vector files are the bytes their README names: every file SHA256SUMS lists hashes to
// its line, and every data file in the directory is listed (no file added or edited unrecorded).
import test from 'ava';
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const DIR = fileURLToPath(new URL('../vectors/upstream/', import.meta.url));
const NOT_DATA = new Set(['README.md', 'SHA256SUMS', '.gitattributes']);

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : [relative(DIR, p)];
  });
}

test('upstream vectors: SHA256SUMS lists every data file, and each hashes to its line', (t) => {
  const listed = new Map(readFileSync(join(DIR, 'SHA256SUMS'), 'utf8').trim().split('\n').map((l) => {
    const [hash, name] = l.split(/\s+\*?/);
    return [name!.replace(/^\.\//, ''), hash!];
  }));
  const data = files(DIR).filter((f) => !NOT_DATA.has(f)).sort();
  t.deepEqual(data, [...listed.keys()].sort(), 'the files present are the files listed');
  const sha256 = (f: string) => createHash('sha256').update(readFileSync(join(DIR, f))).digest('hex');
  const wrong = data.filter((f) => sha256(f) !== listed.get(f));
  t.deepEqual(wrong, [], 'byte-exact copies');
  t.true(data.length > 200, `${data.length} files`);
});
