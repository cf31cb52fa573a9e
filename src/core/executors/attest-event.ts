// ATTEST_EVENT (DESIGN.md §8): an in-toto Statement v1 about the event bytes, in a DSSE envelope
// signed by the node's Ed25519 key. DSSE signs PAE("DSSEv1", type, body), never the base64 text;
// a verifier parses exactly the payload bytes it verified (docs/verify.md §Attestations).
import { canonicalJson, sha256Hex } from '../../protocol/canonical.ts';
import { bytesOf, type Executor } from './types.ts';

export const IN_TOTO_PAYLOAD_TYPE = 'application/vnd.in-toto+json';
export const ATTEST_PREDICATE_TYPE = 'urn:svc:predicate:attest-event:v1';

/** DSSE pre-authentication encoding: "DSSEv1" SP len(type) SP type SP len(body) SP body. */
export function pae(payloadType: string, body: Uint8Array): Buffer {
  const t = Buffer.from(payloadType, 'utf8');
  return Buffer.concat([Buffer.from(`DSSEv1 ${t.length} `), t, Buffer.from(` ${body.length} `), body]);
}

export const attestEvent: Executor = async (ctx, q, a) => {
  const event = bytesOf(a.plain_hex);
  const statement = {
    _type: 'https://in-toto.io/Statement/v1',
    subject: [{ name: 'svc-event', digest: { sha256: sha256Hex(event) } }],
    predicateType: ATTEST_PREDICATE_TYPE,
    predicate: {
      machine_id: q.machine_id,
      quote_id: q.quote_id,
      event_bytes: event.length,
      attested_at: ctx.now().toISOString(),
      node_id: ctx.identity.nodeId,
    },
  };
  const body = Buffer.from(canonicalJson(statement), 'utf8');
  const sig = ctx.identity.sign(pae(IN_TOTO_PAYLOAD_TYPE, body));
  const envelope = {
    payloadType: IN_TOTO_PAYLOAD_TYPE,
    payload: body.toString('base64'),
    signatures: [{ keyid: ctx.identity.keyId, sig: sig.toString('base64') }],
  };
  return {
    fields: { envelope, statement, public_key: ctx.identity.public.public_key },
    input_digest: sha256Hex(event),
    output_digest: sha256Hex(canonicalJson(envelope)),
    status: 'ok',
  };
};
