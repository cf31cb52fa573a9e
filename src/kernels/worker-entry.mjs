// Worker bootstrap: worker threads do not inherit tsx's loader (DESIGN.md §11), so register it
// here, then hand every task to the TypeScript worker.
import { register } from 'tsx/esm/api';

register();
const { default: run } = await import('./worker.ts');
export default run;
