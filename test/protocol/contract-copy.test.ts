// The repository's copy of the published contract (test/contract/SPEC.md) is the published one: when
// the contract sits beside the repository (../shared/spec/SPEC.md), the two are byte for byte the same.
import test from 'ava';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const COPY = fileURLToPath(new URL('../contract/SPEC.md', import.meta.url));
const PUBLISHED = fileURLToPath(new URL('../../../shared/spec/SPEC.md', import.meta.url));

test('test/contract/SPEC.md is the published contract, when that is beside the repository', (t) => {
  const copy = readFileSync(COPY);
  t.true(copy.includes('Commands (21 in total'), 'the copy is the contract');
  if (!existsSync(PUBLISHED)) {
    t.log('no published contract beside the repository: the copy stands alone');
    return;
  }
  const same = copy.equals(readFileSync(PUBLISHED));
  t.true(same, 'test/contract/SPEC.md differs from ../shared/spec/SPEC.md: copy it again');
});
