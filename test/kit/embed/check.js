// What every runtime does with the installed package (test/kit/package.test.ts): one import each
// of @svc/kit/kernels and @svc/kit/verify, the standard SHA-256 vectors, the pulses fetched over HTTP
// from a live svcd, the expansion recomputed, a real receipt verified — and each rejected after one
// flipped byte. Plain JavaScript with bare imports only: Node, Deno, Bun and a page run this file.
import { loadKernels } from '@svc/kit/kernels';
import { ed25519Backend, fromHex, pulseOutput, toHex, verifyPulse, verifyReceipt } from '@svc/kit/verify';

const flipHex = (h, at = 0) => h.slice(0, at) + ((parseInt(h[at], 16) ^ 1).toString(16)) + h.slice(at + 1);
const flipB64url = (s) => (s[0] === 'A' ? 'B' : 'A') + s.slice(1);

export async function check(bundle, runtime) {
  const k = await loadKernels();
  const out = { runtime, backend: await ed25519Backend() };
  out.sha256 = bundle.sha256.map((v) => toHex(k.sha256(fromHex(v.msg_hex))));
  const get = async (i) => {
    const res = await fetch(`${bundle.base}/api/v1/pulses/${i}`);
    if (!res.ok) throw new Error(`pulse ${i}: HTTP ${res.status}`);
    return res.json();
  };
  const r = bundle.result;
  const [committed, revealing] = [await get(r.pulse.index), await get(r.pulse.index + 1)];
  out.expanded = toHex(pulseOutput(k, fromHex(revealing.pulse.revealed_seed), r.quote_id, r.machine_id, r.bits));
  const pulse = await verifyPulse(revealing, committed, { result: r, nodeKeys: bundle.nodes });
  out.pulse = [pulse.valid, pulse.reason];
  const forged = await verifyPulse(revealing, committed, {
    result: { ...r, output_hex: flipHex(r.output_hex, 7) }, nodeKeys: bundle.nodes,
  });
  out.pulseFlipped = [forged.valid, forged.reason];
  const receipt = await verifyReceipt(bundle.receipt, bundle.nodes);
  out.receipt = [receipt.valid, receipt.reason];
  const bad = await verifyReceipt({ ...bundle.receipt, signature: flipB64url(bundle.receipt.signature) }, bundle.nodes);
  out.receiptFlipped = [bad.valid, bad.reason];
  return out;
}
