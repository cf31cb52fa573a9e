// The /verify page's script (bundled for the browser by src/gateway/verify-bundle.ts): at load it
// fetches the kernels and this node's manifest once; from then on every check runs in the page with
// the embedding kit (WebCrypto Ed25519, or @noble/curves where the browser lacks it) and asks the
// server nothing. Whatever goes wrong on the way (a file that cannot be read, anything that throws) is
// shown in the result as what it is, never left to the console. The markup it fills in is verifyPage's
// (src/discovery/pages.ts).
import type { Kernels } from '../kernels/kernels.ts';
import { isObject } from '../kit/bytes.ts';
import { ed25519Backend } from '../kit/ed25519.ts';
import { loadKernels } from '../kit/load.ts';
import type { Check } from '../kit/verify.ts';
import { checkDocument, parseKeys, type Outcome } from './verify-detect.ts';

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

const root = $('verifier');
const docBox = $<HTMLTextAreaElement>('doc');
const keysBox = $<HTMLTextAreaElement>('keys');
const fileInput = $<HTMLInputElement>('file');
const drop = $('drop');
const result = $('result');
const keysStatus = $('keys-status');
const keysTable = $('keys-table');

function el(tag: string, text?: string, cls?: string): HTMLElement {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (cls) e.className = cls;
  return e;
}

/** The keys of a manifest's `node` (or any key set) as a table: key id, public key, window. */
function showKeys(node: Record<string, unknown>): void {
  const keys = Array.isArray(node.keys) ? node.keys.filter(isObject) : [node];
  const head = el('tr'), body = el('tbody'), table = el('table');
  for (const h of ['Key id', 'Public key', 'Valid from', 'Valid until']) head.append(el('th', h));
  const thead = el('thead');
  thead.append(head);
  table.append(thead, body);
  for (const k of keys) {
    const row = el('tr');
    for (const v of [k.key_id, k.public_key, k.valid_from ?? 'first start', k.valid_until ?? '—']) {
      const td = el('td');
      td.append(el('code', String(v), 'hash'));
      row.append(td);
    }
    body.append(row);
  }
  keysTable.replaceChildren(table);
}

/** A thrown value in words, without trusting it to stringify itself. */
function said(e: unknown): string {
  try {
    return e instanceof Error ? e.message : String(e);
  } catch {
    return 'an unreadable error';
  }
}

/** `state`: the result's data-state; by default from the verdict (valid, invalid) or unrecognised. */
function render(o: Outcome, state?: string): void {
  const verdict = el('p', o.message, o.verdict?.valid ? 'verdict ok' : 'verdict bad');
  verdict.id = 'verdict';
  const parts: HTMLElement[] = [verdict];
  if (o.verdict) {
    const list = el('ul');
    list.className = 'checks';
    for (const c of o.verdict.checks as Check[]) {
      const li = el('li', undefined, c.ok ? 'ok' : 'bad');
      li.append(el('span', c.ok ? '✓ ' : '✗ ', 'mark'), el('span', c.name));
      if (c.detail) li.append(' ', el('code', c.detail));
      list.append(li);
    }
    parts.push(el('h3', 'Checks'), list);
    if (!o.verdict.valid && o.verdict.reason) {
      const why = el('p', 'Reason: ');
      why.append(el('code', o.verdict.reason));
      parts.push(why);
    }
  }
  result.replaceChildren(...parts);
  result.dataset.state = state ?? (o.verdict ? (o.verdict.valid ? 'valid' : 'invalid') : 'unrecognised');
}

let kernels: Kernels | null = null;

/** Every check ends in a shown result: the verdict, or why there is none. */
async function check(): Promise<void> {
  try {
    await checkBox();
  } catch (e) {
    render({ kind: null, verdict: null, message: `The check could not be completed: ${said(e)}` }, 'error');
  }
}

async function checkBox(): Promise<void> {
  const text = docBox.value.trim();
  if (!text) { render({ kind: null, verdict: null, message: 'Paste, drop or choose a document first.' }); return; }
  const keys = parseKeys(keysBox.value);
  if (!keys) {
    render({ kind: null, verdict: null, message: 'The trusted keys box holds no key set or key.' });
    return;
  }
  if (!kernels) {
    render({ kind: null, verdict: null, message: 'The kernels did not load: reload the page.' });
    return;
  }
  render(await checkDocument(text, keys, kernels));
}

async function readFile(f: File | undefined): Promise<void> {
  if (!f) return;
  try {
    docBox.value = await f.text();
  } catch (e) {
    render({ kind: null, verdict: null, message: `The file ${JSON.stringify(f.name)} could not be read: ${said(e)}` },
      'error');
    return;
  }
  await check();
}

$('check').addEventListener('click', () => { void check(); });
docBox.addEventListener('paste', () => { setTimeout(() => { void check(); }, 0); });
fileInput.addEventListener('change', () => { void readFile(fileInput.files?.[0]); });
for (const [ev, on] of [['dragenter', true], ['dragover', true], ['dragleave', false], ['drop', false]] as const) {
  drop.addEventListener(ev, (e) => {
    e.preventDefault();
    drop.classList.toggle('over', on);
  });
}
drop.addEventListener('drop', (e) => {
  const f = e.dataTransfer?.files[0];
  if (f) { void readFile(f); return; }
  const text = e.dataTransfer?.getData('text/plain');
  if (text) { docBox.value = text; void check(); }
});

async function start(): Promise<void> {
  const [k, manifest] = await Promise.all([
    loadKernels(new URL(root.dataset.wasm!, location.href)),
    fetch(root.dataset.manifest!).then((r) => (r.ok ? r.json() as Promise<unknown> : null)).catch(() => null),
  ]);
  kernels = k;
  const node = isObject(manifest) && isObject(manifest.node) ? manifest.node : null;
  if (node) {
    keysBox.value = JSON.stringify(node, null, 2);
    keysStatus.textContent = `This node's key set, from its manifest (node ${String(node.node_id)}).`
      + ' Replace it to check material from another node.';
    showKeys(node);
  } else {
    keysStatus.textContent = 'The manifest could not be read: paste the key set you trust below.';
  }
  root.dataset.ready = await ed25519Backend();
}

start().catch((e: unknown) => {
  root.dataset.ready = 'failed';
  render({ kind: null, verdict: null, message: `The verifier could not start: ${said(e)}` }, 'error');
});
