// The repository's copy of the published contract (test/contract/SPEC.md) is the published one: when
// the contract sits beside the repository (../shared/spec/SPEC.md), the two are byte for byte the same.
import test from 'ava';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const COPY = fileURLToPath(new URL('../contract/SPEC.md', import.meta.url));
const README = fileURLToPath(new URL('../contract/README.md', import.meta.url));
const PUBLISHED = fileURLToPath(new URL('../../../shared/spec/SPEC.md', import.meta.url));

test('test/contract/SPEC.md is the published contract, when that is beside the repository', (t) => {
  const copy = readFileSync(COPY);
  t.true(copy.includes('Commands (21 in total'), 'the copy is the contract');
  const stated = /SHA-256\s+`([0-9a-f]{64})`/.exec(readFileSync(README, 'utf8'))?.[1];
  t.is(createHash('sha256').update(copy).digest('hex'), stated ?? 'no hash stated',
    'the copy is the one test/contract/README.md names');
  if (!existsSync(PUBLISHED)) {
    t.log('no published contract beside the repository: the copy stands alone');
    return;
  }
  const same = copy.equals(readFileSync(PUBLISHED));
  t.true(same, 'test/contract/SPEC.md differs from ../shared/spec/SPEC.md: copy it again');
});
