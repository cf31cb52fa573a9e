// Example calls, for openapi.json and everything that renders it: real answers of one node, recorded
// from one machine's story (a first invoice, settled; a quote, accept and execution of every service;
// the receipt verified; the sandbox's four steps), with the response envelope left out and CAPS's
// command list cut to two. Pure data. The registry attaches these to its commands (`examples`);
// test/protocol/examples.test.ts holds each to its command's schemas, as the service validates them.

export interface CallExample {
  /** what this example shows, when that is not just "a call that succeeds" */
  readonly summary?: string;
  /** the command's args as a caller sends them (over HTTP: path, query and body together) */
  readonly args: Readonly<Record<string, unknown>>;
  /** the result, as the response envelope carries it */
  readonly result: Readonly<Record<string, unknown>>;
}

const MACHINE = 'my-agent';
const NODE_ID = 'svc-node-6e0f5f7b71eeebe1';
const KEY_ID = '6e0f5f7b71eeebe1';
const PUBLIC_KEY = '5_qLZmDjDDGYk3glQ0bISpgJ3CXnKjqkMzCXsCm-3ms';
const EDGE_CERT_SHA256 = 'e8ff117c013ebee5331744f36a63b8804dd5a011ff3521dc8f6aeea381bac344';
const CHAIN_ID = 'chain_D370B07cWE9JchEPfLb9';

/** The node of the examples, as discovery documents describe a node: what example documents are built from. */
export const EXAMPLE_NODE = {
  node_id: NODE_ID, key_id: KEY_ID, public_key: PUBLIC_KEY, edge_cert_sha256: EDGE_CERT_SHA256,
} as const;

/** The request id an example response carries (the x-request-id a client sent, or one the gateway made). */
export const EXAMPLE_REQUEST_ID = '580865bf-2a37-492d-aad8-2de64a34dd63';

export const EXAMPLES = {
  HELLO: [
    {
      args: { nonce: 'my-nonce-123' },
      result: {
        protocol: 'svc/1', version: '1.0.5', node_id: NODE_ID, time: '2026-11-29T01:43:54.301Z',
        edge_proof: {
          alg: 'Ed25519', key_id: KEY_ID, public_key: PUBLIC_KEY,
          statement: {
            type: 'svc/edge-proof/v1', protocol: 'svc/1', node_id: NODE_ID, key_id: KEY_ID,
            edge_cert_sha256: EDGE_CERT_SHA256, nonce: 'my-nonce-123', time: '2026-11-29T01:43:54.301Z',
          },
          signature: '7ej7dbNjuXJkpKOAcbaFW60SEu-EYmxSbT27Csjv8nvOLtTZtn1YA-ub2tWN97dGHAq237Su_T4cl7QEuIJaDg',
          signed_bytes: 'RFC 8785 canonical JSON of statement',
        },
        pulse: { chain_id: CHAIN_ID, latest_index: 0 },
        node_keys: [
          {
            key_id: KEY_ID, alg: 'Ed25519', public_key: PUBLIC_KEY, valid_from: null, valid_until: null,
            status: 'current',
          },
        ],
      },
    },
  ],
  CAPS: [
    {
      summary: 'commands trimmed to the first two of 21', args: {},
      result: {
        protocol: 'svc/1', version: '1.0.5', capability_count: 21,
        capabilities: [
          'HELLO', 'CAPS', 'BALANCE', 'QUOTE', 'ACCEPT_QUOTE', 'GET_PULSE', 'MAKE_BCT', 'VERIFY_BCT', 'VERIFY_RESULT',
          'ATTEST_EVENT', 'SUBMIT_ID', 'BVM_EXEC', 'SEALED_MESSAGE', 'TIMESTAMP_PROOF', 'MACHINE_EVENT_LOG',
          'GET_RECEIPT', 'VERIFY_RECEIPT', 'FUND_ACCOUNT', 'INVOICE_STATUS', 'SETTLE_INVOICE', 'RECOVER_RUNTIME',
        ],
        commands: [
          {
            name: 'HELLO', group: 'Discovery', access: 'public', http: { method: 'GET', path: '/api/v1/hello' },
            cli: ['hello'], billing: 'free', auth: 'none', rate_class: 'public_low', execution: false,
            purpose: 'protocol greeting and public edge proof',
          },
          {
            name: 'CAPS', group: 'Discovery', access: 'public', http: { method: 'GET', path: '/api/v1/caps' },
            cli: ['caps'], billing: 'free', auth: 'none', rate_class: 'public_low', execution: false,
            purpose: 'machine-readable capability advertisement',
          },
        ],
        auxiliary: ['HEALTH', 'PAYMENT_INFO', 'PULSE'],
        services: [
          { service: 'get-pulse', command: 'GET_PULSE', quote_billing: 'free_limited', offered: true },
          { service: 'make-bct', command: 'MAKE_BCT', quote_billing: 'free_limited', offered: true },
          { service: 'verify-bct', command: 'VERIFY_BCT', quote_billing: 'free_limited', offered: true },
          { service: 'verify-result', command: 'VERIFY_RESULT', quote_billing: 'free_limited_quote', offered: true },
          { service: 'attest-event', command: 'ATTEST_EVENT', quote_billing: 'free_limited_quote', offered: true },
          { service: 'submit-id', command: 'SUBMIT_ID', quote_billing: 'free_limited_quote', offered: true },
          { service: 'bvm-exec', command: 'BVM_EXEC', quote_billing: 'free_limited_quote', offered: true },
          { service: 'sealed-message', command: 'SEALED_MESSAGE', quote_billing: 'free_limited_quote', offered: true },
          {
            service: 'timestamp-proof', command: 'TIMESTAMP_PROOF', quote_billing: 'free_limited_quote', offered: true,
          },
          {
            service: 'machine-event-log', command: 'MACHINE_EVENT_LOG', quote_billing: 'free_limited_quote',
            offered: true,
          },
        ],
        price_book: 'competitive_v6', price_version: 'svcC_REF_USD_WORK_V6', quote_terms_version: 5,
      },
    },
  ],
  BALANCE: [
    {
      args: { machine_id: MACHINE },
      result: {
        machine_id: MACHINE, available_units: '502689100', reserved_units: '0', unit_scale: 100000000,
        available_svcC: '5.02689100', reserved_svcC: '0.00000000',
      },
    },
  ],
  QUOTE: [
    {
      args: { service: 'get-pulse', machine_id: MACHINE, bits: 256 },
      result: {
        quote_id: 'q1AaIk-RfiAADqYAABAAABAAAAAAAAACAAAAAAAFpVyFzKFTLxF4iQxOLaACJ0lVWarcvH22t6iJfxQlo',
        service: 'get-pulse', command: 'GET_PULSE', machine_id: MACHINE, state: 'issued', bits: 256, bytes: 0,
        max_output: 8192, priority: 'normal',
        price: {
          service: 'get-pulse', bits: 256, input_bytes: 0, estimated_ms: 2, priority_class: 'standard',
          quote_units: 23125, usd_estimate: '0.00023125',
        },
        quote_units: 23125, price_version: 'svcC_REF_USD_WORK_V6', quote_terms_version: 5, input_field: null,
        input_digest: null, created_at: '2026-11-29T01:43:54.082Z', expires_at: '2026-11-29T01:44:54.082Z',
      },
    },
    {
      args: { service: 'make-bct', machine_id: MACHINE, plain_hex: '68656c6c6f' },
      result: {
        quote_id: 'q1AaIk-RgWAADqYAEBAAEAAAAAAAUAACAAAAAAAKQQYEKws27ZF4iQxOLaASzyTbpfsKMOJug7KsW54p4bFh5cH6dCXnMEM2KTi'
          + '5gkRJglQpnq0pLFxF4DrBo6Ug',
        service: 'make-bct', command: 'MAKE_BCT', machine_id: MACHINE, state: 'issued', bits: 65536, bytes: 5,
        max_output: 8192, priority: 'normal',
        price: {
          service: 'make-bct', bits: 65536, input_bytes: 5, estimated_ms: 2, priority_class: 'standard',
          quote_units: 42000, usd_estimate: '0.00042000',
        },
        quote_units: 42000, price_version: 'svcC_REF_USD_WORK_V6', quote_terms_version: 5, input_field: 'plain_hex',
        input_digest: '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824',
        created_at: '2026-11-29T01:43:54.134Z', expires_at: '2026-11-29T01:44:54.134Z',
      },
    },
    {
      args: {
        service: 'verify-bct', machine_id: MACHINE,
        packet_hex: '4243543104f46c97017beaecc5aedb685eebb25567cff3e6d6973e1dc1cc5ea3a1292e2ce15997c9ce8bcf3a7dc5eb9c2'
          + '572f457c80785bd7d',
      },
      result: {
        quote_id: 'q1AaIk-RhQAADqYAIBAAEAAAAAADkAACAAAAAAAKQQ-SbNfWxOF4iQxOLaAWRCdKyCFDY0U5cMxnI6HNeQLApG9R8uGpUW3v9sh'
          + '9KfHRp695o2LNIZRRuLOpzg8A',
        service: 'verify-bct', command: 'VERIFY_BCT', machine_id: MACHINE, state: 'issued', bits: 65536, bytes: 57,
        max_output: 8192, priority: 'normal',
        price: {
          service: 'verify-bct', bits: 65536, input_bytes: 57, estimated_ms: 2, priority_class: 'standard',
          quote_units: 42000, usd_estimate: '0.00042000',
        },
        quote_units: 42000, price_version: 'svcC_REF_USD_WORK_V6', quote_terms_version: 5, input_field: 'packet_hex',
        input_digest: '644274ac8214363453970cc6723a1cd7902c0a46f51f2e1a9516deff6c87d29f',
        created_at: '2026-11-29T01:43:54.192Z', expires_at: '2026-11-29T01:44:54.192Z',
      },
    },
    {
      args: { service: 'verify-result', machine_id: MACHINE, bytes: 405 },
      result: {
        quote_id: 'q1AaIk-RhdAADqYAMBAAEAAAAAAZUAACAAAAAAAKQQKPtETM4tF4iQxOLaAG8T6dPvunN3Sz6FULvFTg4',
        service: 'verify-result', command: 'VERIFY_RESULT', machine_id: MACHINE, state: 'issued', bits: 65536,
        bytes: 405, max_output: 8192, priority: 'normal',
        price: {
          service: 'verify-result', bits: 65536, input_bytes: 405, estimated_ms: 2, priority_class: 'standard',
          quote_units: 42000, usd_estimate: '0.00042000',
        },
        quote_units: 42000, price_version: 'svcC_REF_USD_WORK_V6', quote_terms_version: 5, input_field: null,
        input_digest: null, created_at: '2026-11-29T01:43:54.205Z', expires_at: '2026-11-29T01:44:54.205Z',
      },
    },
    {
      args: { service: 'attest-event', machine_id: MACHINE, bytes: 17 },
      result: {
        quote_id: 'q1AaIk-RhmAADqYAQBAAEAAAAAABEAACAAAAAAAPIwxOEaMZ8QF4iQxOLaAC1_EhtkdfAacZ8fjr6zBBA',
        service: 'attest-event', command: 'ATTEST_EVENT', machine_id: MACHINE, state: 'issued', bits: 65536, bytes: 17,
        max_output: 8192, priority: 'normal',
        price: {
          service: 'attest-event', bits: 65536, input_bytes: 17, estimated_ms: 2, priority_class: 'standard',
          quote_units: 62000, usd_estimate: '0.00062000',
        },
        quote_units: 62000, price_version: 'svcC_REF_USD_WORK_V6', quote_terms_version: 5, input_field: null,
        input_digest: null, created_at: '2026-11-29T01:43:54.214Z', expires_at: '2026-11-29T01:44:54.214Z',
      },
    },
    {
      args: { service: 'submit-id', machine_id: MACHINE, bytes: 17 },
      result: {
        quote_id: 'q1AaIk-Rh1AADqYAUBAAEAAAAAABEAACAAAAAAAPIwvYwnyoQ7F4iQxOLaAGUz5NIY_68S8bwrx9BGHmY',
        service: 'submit-id', command: 'SUBMIT_ID', machine_id: MACHINE, state: 'issued', bits: 65536, bytes: 17,
        max_output: 8192, priority: 'normal',
        price: {
          service: 'submit-id', bits: 65536, input_bytes: 17, estimated_ms: 2, priority_class: 'standard',
          quote_units: 62000, usd_estimate: '0.00062000',
        },
        quote_units: 62000, price_version: 'svcC_REF_USD_WORK_V6', quote_terms_version: 5, input_field: null,
        input_digest: null, created_at: '2026-11-29T01:43:54.229Z', expires_at: '2026-11-29T01:44:54.229Z',
      },
    },
    {
      args: { service: 'bvm-exec', machine_id: MACHINE, bytes: 28 },
      result: {
        quote_id: 'q1AaIk-RiFAADqYAYBAAEAAAAAABwAACAAAAAAAMsgBbzTD4N9F4iQxOLaAExzLRfkUggcYcvsaUMcv6U',
        service: 'bvm-exec', command: 'BVM_EXEC', machine_id: MACHINE, state: 'issued', bits: 65536, bytes: 28,
        max_output: 8192, priority: 'normal',
        price: {
          service: 'bvm-exec', bits: 65536, input_bytes: 28, estimated_ms: 2, priority_class: 'standard',
          quote_units: 52000, usd_estimate: '0.00052000',
        },
        quote_units: 52000, price_version: 'svcC_REF_USD_WORK_V6', quote_terms_version: 5, input_field: null,
        input_digest: null, created_at: '2026-11-29T01:43:54.245Z', expires_at: '2026-11-29T01:44:54.245Z',
      },
    },
    {
      args: { service: 'sealed-message', machine_id: MACHINE, bytes: 37 },
      result: {
        quote_id: 'q1AaIk-RiRAADqYAcBAAEAAAAAACUAACAAAAAAAMsgmpZZrc9GF4iQxOLaADOnQ7NMD3cvJHaKkQS4GYY',
        service: 'sealed-message', command: 'SEALED_MESSAGE', machine_id: MACHINE, state: 'issued', bits: 65536,
        bytes: 37, max_output: 8192, priority: 'normal',
        price: {
          service: 'sealed-message', bits: 65536, input_bytes: 37, estimated_ms: 2, priority_class: 'standard',
          quote_units: 52000, usd_estimate: '0.00052000',
        },
        quote_units: 52000, price_version: 'svcC_REF_USD_WORK_V6', quote_terms_version: 5, input_field: null,
        input_digest: null, created_at: '2026-11-29T01:43:54.257Z', expires_at: '2026-11-29T01:44:54.257Z',
      },
    },
    {
      args: { service: 'timestamp-proof', machine_id: MACHINE },
      result: {
        quote_id: 'q1AaIk-RioAADqYAgBAAEAAAAAACAAACAAAAAAAMsgExhNi99xF4iQxOLaAHh04MR-z6rcc7BTh7Rr7HU',
        service: 'timestamp-proof', command: 'TIMESTAMP_PROOF', machine_id: MACHINE, state: 'issued', bits: 65536,
        bytes: 32, max_output: 8192, priority: 'normal',
        price: {
          service: 'timestamp-proof', bits: 65536, input_bytes: 32, estimated_ms: 2, priority_class: 'standard',
          quote_units: 52000, usd_estimate: '0.00052000',
        },
        quote_units: 52000, price_version: 'svcC_REF_USD_WORK_V6', quote_terms_version: 5, input_field: null,
        input_digest: null, created_at: '2026-11-29T01:43:54.280Z', expires_at: '2026-11-29T01:44:54.280Z',
      },
    },
    {
      args: { service: 'machine-event-log', machine_id: MACHINE, bytes: 148 },
      result: {
        quote_id: 'q1AaIk-Ri0AADqYAkBAAEAAAAAAJQAACAAAAAAAMsg7h8cdXQBF4iQxOLaAJ44iH3qBDMU6hijme4DvF0',
        service: 'machine-event-log', command: 'MACHINE_EVENT_LOG', machine_id: MACHINE, state: 'issued', bits: 65536,
        bytes: 148, max_output: 8192, priority: 'normal',
        price: {
          service: 'machine-event-log', bits: 65536, input_bytes: 148, estimated_ms: 2, priority_class: 'standard',
          quote_units: 52000, usd_estimate: '0.00052000',
        },
        quote_units: 52000, price_version: 'svcC_REF_USD_WORK_V6', quote_terms_version: 5, input_field: null,
        input_digest: null, created_at: '2026-11-29T01:43:54.292Z', expires_at: '2026-11-29T01:44:54.292Z',
      },
    },
  ],
  ACCEPT_QUOTE: [
    {
      args: {
        quote_id: 'q1AaIk-RfiAADqYAABAAABAAAAAAAAACAAAAAAAFpVyFzKFTLxF4iQxOLaACJ0lVWarcvH22t6iJfxQlo',
        machine_id: MACHINE,
      },
      result: {
        quote_id: 'q1AaIk-RfiAADqYAABAAABAAAAAAAAACAAAAAAAFpVyFzKFTLxF4iQxOLaACJ0lVWarcvH22t6iJfxQlo',
        service: 'get-pulse', command: 'GET_PULSE', machine_id: MACHINE, state: 'accepted', bits: 256, bytes: 0,
        max_output: 8192, priority: 'normal',
        price: {
          service: 'get-pulse', bits: 256, input_bytes: 0, estimated_ms: 2, priority_class: 'standard',
          quote_units: 23125, usd_estimate: '0.00023125',
        },
        quote_units: 23125, price_version: 'svcC_REF_USD_WORK_V6', quote_terms_version: 5, input_field: null,
        input_digest: null, created_at: '2026-11-29T01:43:54.082Z', expires_at: '2026-11-29T01:44:54.082Z',
        accepted_at: '2026-11-29T01:43:54.094Z',
      },
    },
  ],
  GET_PULSE: [
    {
      args: {
        machine_id: MACHINE,
        quote_id: 'q1AaIk-RfiAADqYAABAAABAAAAAAAAACAAAAAAAFpVyFzKFTLxF4iQxOLaACJ0lVWarcvH22t6iJfxQlo',
      },
      result: {
        service: 'get-pulse', command: 'GET_PULSE',
        quote_id: 'q1AaIk-RfiAADqYAABAAABAAAAAAAAACAAAAAAAFpVyFzKFTLxF4iQxOLaACJ0lVWarcvH22t6iJfxQlo',
        machine_id: MACHINE, units_charged: 23125, receipt_id: 'rcpt_eS2MijlXBVi9wurM0jFD',
        result_tag: 'e51c49407a834795439683802073986480aa31882e38c263c253b139fc34d0dc', status: 'ok',
        input_digest: '2e834e4cb6838f20743bf9f1265fcc289dc617f680a243379a2ec202b6eccdcf',
        output_digest: '3555b259063cdcdb421873cb5800e669450db9abdf31df8587d2227e4e45b46f', bits: 256,
        output_hex: 'cc6a3c431452282c70216a6da50311d59193dc7f4fd871e87d09cc6b7fa17e41',
        pulse: {
          chain_id: CHAIN_ID, index: 0, commit: 'd5800c79eb2321af31c199e3a96fb7388028f87ad3ba33f45053122af8fe378a',
          period_ms: 60000, revealed_by_index: 1,
        },
        verify: 'svc verify-pulse: once pulse index+1 is published, SHA-256(its revealed_seed) = commit and the output'
          + ' recomputes (docs/verify.md)',
      },
    },
  ],
  MAKE_BCT: [
    {
      args: {
        machine_id: MACHINE,
        quote_id: 'q1AaIk-RgWAADqYAEBAAEAAAAAAAUAACAAAAAAAKQQYEKws27ZF4iQxOLaASzyTbpfsKMOJug7KsW54p4bFh5cH6dCXnMEM2KTi'
          + '5gkRJglQpnq0pLFxF4DrBo6Ug',
        plain_hex: '68656c6c6f',
      },
      result: {
        service: 'make-bct', command: 'MAKE_BCT',
        quote_id: 'q1AaIk-RgWAADqYAEBAAEAAAAAAAUAACAAAAAAAKQQYEKws27ZF4iQxOLaASzyTbpfsKMOJug7KsW54p4bFh5cH6dCXnMEM2KTi'
          + '5gkRJglQpnq0pLFxF4DrBo6Ug',
        machine_id: MACHINE, units_charged: 42000, receipt_id: 'rcpt_02o5flq07wqfvHtReJrk',
        result_tag: 'bea71ca56c7f2cd372b26fd18327ed46734f5fc2a86b3cd9fb304ed7f8ba00c6', status: 'ok',
        input_digest: '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824',
        output_digest: '644274ac8214363453970cc6723a1cd7902c0a46f51f2e1a9516deff6c87d29f',
        packet_hex: '4243543104f46c97017beaecc5aedb685eebb25567cff3e6d6973e1dc1cc5ea3a1292e2ce15997c9ce8bcf3a7dc5eb9c2'
          + '572f457c80785bd7d',
        format: 'BCT1', key_id: '04f46c97017beaec', plaintext_bytes: 5,
      },
    },
  ],
  VERIFY_BCT: [
    {
      args: {
        machine_id: MACHINE,
        quote_id: 'q1AaIk-RhQAADqYAIBAAEAAAAAADkAACAAAAAAAKQQ-SbNfWxOF4iQxOLaAWRCdKyCFDY0U5cMxnI6HNeQLApG9R8uGpUW3v9sh'
          + '9KfHRp695o2LNIZRRuLOpzg8A',
        packet_hex: '4243543104f46c97017beaecc5aedb685eebb25567cff3e6d6973e1dc1cc5ea3a1292e2ce15997c9ce8bcf3a7dc5eb9c2'
          + '572f457c80785bd7d',
      },
      result: {
        service: 'verify-bct', command: 'VERIFY_BCT',
        quote_id: 'q1AaIk-RhQAADqYAIBAAEAAAAAADkAACAAAAAAAKQQ-SbNfWxOF4iQxOLaAWRCdKyCFDY0U5cMxnI6HNeQLApG9R8uGpUW3v9sh'
          + '9KfHRp695o2LNIZRRuLOpzg8A',
        machine_id: MACHINE, units_charged: 42000, receipt_id: 'rcpt_SpUi0dVbY3fijPoGfkpm',
        result_tag: 'bf35ee6a3db593a06802ddfcd1fb38af74e56f562a860aacf8c0aaaf531c72a4', status: 'valid',
        input_digest: '644274ac8214363453970cc6723a1cd7902c0a46f51f2e1a9516deff6c87d29f',
        output_digest: '4c512adad3e4b98e2df05443fc38e396b5f8b37e279111d3683a9bde8dbbbff9', valid: true,
        plain_hex: '68656c6c6f',
      },
    },
  ],
  VERIFY_RESULT: [
    {
      args: {
        machine_id: MACHINE,
        quote_id: 'q1AaIk-RhdAADqYAMBAAEAAAAAAZUAACAAAAAAAKQQKPtETM4tF4iQxOLaAG8T6dPvunN3Sz6FULvFTg4',
        packet_hex: '7b2273657276696365223a226d616b652d626374222c2271756f74655f6964223a2271314161496b2d526757414144715'
          + '94145424141454141414141414155414143414141414141414b515159454b777332375a46346951784f4c6141537a795462706673'
          + '4b4d4f4a7567374b735735347034624668356348366443586e4d454d324b546935676b524a676c51706e7130704c4678463444724'
          + '26f365567222c22696e7075745f646967657374223a22326366323464626135666230613330653236653833623261633562396532'
          + '39653162313631653563316661373432356537333034333336323933386239383234222c226f75747075745f646967657374223a2'
          + '236343432373461633832313433363334353339373063633637323361316364373930326330613436663531663265316139353136'
          + '646566663663383764323966222c22726573756c745f746167223a226265613731636135366337663263643337326232366664313'
          + '8333237656434363733346635666332613836623363643966623330346564376638626130306336227d',
      },
      result: {
        service: 'verify-result', command: 'VERIFY_RESULT',
        quote_id: 'q1AaIk-RhdAADqYAMBAAEAAAAAAZUAACAAAAAAAKQQKPtETM4tF4iQxOLaAG8T6dPvunN3Sz6FULvFTg4',
        machine_id: MACHINE, units_charged: 42000, receipt_id: 'rcpt_9QHLXaWCwKj0UlsVnJur',
        result_tag: '0532424363e2d8516895d2f1759da646fa7f106290063952d2e7a8283100d865', status: 'valid',
        input_digest: '9ad0f3000256c723676338f0757c5ef74decc7032125dd98e729b60d13a4b5da',
        output_digest: '8daf09a6fc31937457dd77e9c25ce4b21349d605b561a8c5d557841bf964c9a0', valid: true,
      },
    },
  ],
  ATTEST_EVENT: [
    {
      args: {
        machine_id: MACHINE,
        quote_id: 'q1AaIk-RhmAADqYAQBAAEAAAAAABEAACAAAAAAAPIwxOEaMZ8QF4iQxOLaAC1_EhtkdfAacZ8fjr6zBBA',
        plain_hex: '7b22646f6f72223a226f70656e6564227d',
      },
      result: {
        service: 'attest-event', command: 'ATTEST_EVENT',
        quote_id: 'q1AaIk-RhmAADqYAQBAAEAAAAAABEAACAAAAAAAPIwxOEaMZ8QF4iQxOLaAC1_EhtkdfAacZ8fjr6zBBA',
        machine_id: MACHINE, units_charged: 62000, receipt_id: 'rcpt_hoygAsu8XskTkh-XRHWS',
        result_tag: '9b9f1644c04ac6078cc92ecca5820bcbf988b938021292a80096e49b27f16152', status: 'ok',
        input_digest: '8f6b5adcf454f6f265a69774fbb436ed2a348fa8bd05a2bc81280f1e6daaa07e',
        output_digest: '070127b6249d41630546d190ca28a9f2301f8f70bc505df5600f12cb662cca52',
        envelope: {
          payloadType: 'application/vnd.in-toto+json',
          payload: 'eyJfdHlwZSI6Imh0dHBzOi8vaW4tdG90by5pby9TdGF0ZW1lbnQvdjEiLCJwcmVkaWNhdGUiOnsiYXR0ZXN0ZWRfYXQiOiIyMD'
            + 'I2LTExLTI5VDAxOjQzOjU0LjIxOVoiLCJldmVudF9ieXRlcyI6MTcsIm1hY2hpbmVfaWQiOiJteS1hZ2VudCIsIm5vZGVfaWQiOiJzd'
            + 'mMtbm9kZS02ZTBmNWY3YjcxZWVlYmUxIiwicXVvdGVfaWQiOiJxMUFhSWstUmhtQUFEcVlBUUJBQUVBQUFBQUFCRUFBQ0FBQUFBQUFQ'
            + 'SXd4T0VhTVo4UUY0aVF4T0xhQUMxX0VodGtkZkFhY1o4ZmpyNnpCQkEifSwicHJlZGljYXRlVHlwZSI6InVybjpzdmM6cHJlZGljYXR'
            + 'lOmF0dGVzdC1ldmVudDp2MSIsInN1YmplY3QiOlt7ImRpZ2VzdCI6eyJzaGEyNTYiOiI4ZjZiNWFkY2Y0NTRmNmYyNjVhNjk3NzRmYm'
            + 'I0MzZlZDJhMzQ4ZmE4YmQwNWEyYmM4MTI4MGYxZTZkYWFhMDdlIn0sIm5hbWUiOiJzdmMtZXZlbnQifV19',
          signatures: [
            {
              keyid: KEY_ID,
              sig: 'sZ1ZVy+5RfQcYY4dcIUv8qJ3/81LRq6u4OJx8z29ehU+EbQkKQsaw7XYPFwasSNNJD/kxa78d52OjBoWm879BA==',
            },
          ],
        },
        statement: {
          _type: 'https://in-toto.io/Statement/v1',
          subject: [
            {
              name: 'svc-event', digest: { sha256: '8f6b5adcf454f6f265a69774fbb436ed2a348fa8bd05a2bc81280f1e6daaa07e' },
            },
          ],
          predicateType: 'urn:svc:predicate:attest-event:v1',
          predicate: {
            machine_id: MACHINE,
            quote_id: 'q1AaIk-RhmAADqYAQBAAEAAAAAABEAACAAAAAAAPIwxOEaMZ8QF4iQxOLaAC1_EhtkdfAacZ8fjr6zBBA',
            event_bytes: 17, attested_at: '2026-11-29T01:43:54.219Z', node_id: NODE_ID,
          },
        },
        public_key: PUBLIC_KEY,
      },
    },
  ],
  SUBMIT_ID: [
    {
      args: {
        machine_id: MACHINE,
        quote_id: 'q1AaIk-Rh1AADqYAUBAAEAAAAAABEAACAAAAAAAPIwvYwnyoQ7F4iQxOLaAGUz5NIY_68S8bwrx9BGHmY',
        plain_hex: '7b22646f6f72223a226f70656e6564227d',
      },
      result: {
        service: 'submit-id', command: 'SUBMIT_ID',
        quote_id: 'q1AaIk-Rh1AADqYAUBAAEAAAAAABEAACAAAAAAAPIwvYwnyoQ7F4iQxOLaAGUz5NIY_68S8bwrx9BGHmY',
        machine_id: MACHINE, units_charged: 62000, receipt_id: 'rcpt_4JMBNu3ekCgqedjgXmg7',
        result_tag: 'db4821cbc1ae26640e2a0df52b27b9136035f6b7bf9dd6f51d1948b3f842c303', status: 'ok',
        input_digest: '8f6b5adcf454f6f265a69774fbb436ed2a348fa8bd05a2bc81280f1e6daaa07e',
        output_digest: 'db38ebba5f47e5f5593bd03eebd44ef2317153d51a633e054e68489f5be19036',
        id: 'svcid_e40609083dfba3dae0366756c6199b1e',
        record: {
          format: 'svc_identity_v1', id: 'svcid_e40609083dfba3dae0366756c6199b1e',
          document_sha256: '8f6b5adcf454f6f265a69774fbb436ed2a348fa8bd05a2bc81280f1e6daaa07e', document_bytes: 17,
          machine_id: MACHINE,
          quote_id: 'q1AaIk-Rh1AADqYAUBAAEAAAAAABEAACAAAAAAAPIwvYwnyoQ7F4iQxOLaAGUz5NIY_68S8bwrx9BGHmY',
          registered_at: '2026-11-29T01:43:54.237Z', node_id: NODE_ID, key_id: KEY_ID,
        },
        signature: 'IEX_1CJkjJWPbgUFCf9jT8m_5AkeL3GkX-aCow5qt7do3rKAoqrivIQa5e7uoHh_60bJL49H1xCCRexV5_WLBg',
        public_key: PUBLIC_KEY,
      },
    },
  ],
  BVM_EXEC: [
    {
      args: {
        machine_id: MACHINE,
        quote_id: 'q1AaIk-RiFAADqYAYBAAEAAAAAABwAACAAAAAAAMsgBbzTD4N9F4iQxOLaAExzLRfkUggcYcvsaUMcv6U',
        plain_hex: '0062766d0100000000000000040000000000000000000000032a4b00',
      },
      result: {
        service: 'bvm-exec', command: 'BVM_EXEC',
        quote_id: 'q1AaIk-RiFAADqYAYBAAEAAAAAABwAACAAAAAAAMsgBbzTD4N9F4iQxOLaAExzLRfkUggcYcvsaUMcv6U',
        machine_id: MACHINE, units_charged: 52000, receipt_id: 'rcpt_3949v_WiPUZeWmHDnN0i',
        result_tag: 'f174c6963dfd9d225811ec594de9c43684a42abdcfbb2251e9f1847ea90e13cc', status: 'halted',
        input_digest: '4bc992c22cc11b09496b9721accdaa393826120ec35c65da6c57dc2c6f28d55b',
        output_digest: '6db9d946b63358abab59eab7381c1fa1db378f9cd3e339b21328481e040a8264',
        bvm: { status: 'halted', halted: true, steps: 3, pc: 3, fuel: 65536, max_output: 8192 }, output_hex: '2a',
      },
    },
  ],
  SEALED_MESSAGE: [
    {
      args: {
        machine_id: MACHINE,
        quote_id: 'q1AaIk-RiRAADqYAcBAAEAAAAAACUAACAAAAAAAMsgmpZZrc9GF4iQxOLaADOnQ7NMD3cvJHaKkQS4GYY',
        plain_hex: '68656c6c6f', packet_hex: 'defceb3f9aa68437cdf7265e153f2a191704273bf141fa3017eceace43d7427f',
      },
      result: {
        service: 'sealed-message', command: 'SEALED_MESSAGE',
        quote_id: 'q1AaIk-RiRAADqYAcBAAEAAAAAACUAACAAAAAAAMsgmpZZrc9GF4iQxOLaADOnQ7NMD3cvJHaKkQS4GYY',
        machine_id: MACHINE, units_charged: 52000, receipt_id: 'rcpt_5sEfy6PQpkBD9EWkn4VE',
        result_tag: '078ab1eea12a14ec0c7288e1c979e4e991de2a6c8472e2e40cc9af60181c743d', status: 'ok',
        input_digest: 'c62baf739d626c7e86438e5cce4d708bce5196962508132cdeba2ed858d64c66',
        output_digest: '04b41f681e2d79be2d35c3b90141f26b6c945497f1100f41f7d92ed5f410e99e',
        suite: {
          kem: 'DHKEM(X25519, HKDF-SHA256)', kem_id: 32, kdf: 'HKDF-SHA256', kdf_id: 1, aead: 'ChaCha20Poly1305',
          aead_id: 3, mode: 'base',
        },
        info_hex: '737663207365616c65642d6d657373616765207631', aad_hex: '',
        enc_hex: '2e70b4d131d4ded4b9c86e07345f7b87ce0cf922c2fdbcca108c6d5fccffca24',
        ciphertext_hex: 'f62fca06dffbc541aaea388b945b700a922809c838',
      },
    },
  ],
  TIMESTAMP_PROOF: [
    {
      args: {
        machine_id: MACHINE,
        quote_id: 'q1AaIk-RioAADqYAgBAAEAAAAAACAAACAAAAAAAMsgExhNi99xF4iQxOLaAHh04MR-z6rcc7BTh7Rr7HU',
        plain_hex: 'd6bd37c01a945e0212365a72d72b7cb6cdb3e58fcf115c70e93d32d1028ebd06',
      },
      result: {
        service: 'timestamp-proof', command: 'TIMESTAMP_PROOF',
        quote_id: 'q1AaIk-RioAADqYAgBAAEAAAAAACAAACAAAAAAAMsgExhNi99xF4iQxOLaAHh04MR-z6rcc7BTh7Rr7HU',
        machine_id: MACHINE, units_charged: 52000, receipt_id: 'rcpt_4Y7D58g1pFdmZPogZZZz',
        result_tag: '711f7501409bc1e776bd089d277007bf783127da99646d0241965efb46c928c5', status: 'ok',
        input_digest: '89a49336b79e49d76830a0a21e5b25c14009176d72d8277efea8ead631f10c54',
        output_digest: '9bd90cb6261d9dbb91188e2357a6a1e3dd30587d4577651b8f54f560f947ba52',
        token: {
          format: 'svc_timestamp_v1', log_origin: 'svc/svc-node-6e0f5f7b71eeebe1/timestamps', serial: 0,
          digest_sha256: 'd6bd37c01a945e0212365a72d72b7cb6cdb3e58fcf115c70e93d32d1028ebd06',
          time: '2026-11-29T01:43:54.288Z', accuracy_ms: 1000, node_id: NODE_ID, key_id: KEY_ID,
        },
        token_signature: '7N4hQ-WAx-0ny_0YFd-NX1ieqDYrQ6HjiS1nGNpyC34m8l3KWAtEtiHxsg0cRrZ8yVjR79u3fjd7cHImzcirCQ',
        log: {
          origin: 'svc/svc-node-6e0f5f7b71eeebe1/timestamps', leaf_index: 0, tree_size: 1,
          entry_base64: 'eyJhY2N1cmFjeV9tcyI6MTAwMCwiZGlnZXN0X3NoYTI1NiI6ImQ2YmQzN2MwMWE5NDVlMDIxMjM2NWE3MmQ3MmI3Y2I2Y'
            + '2RiM2U1OGZjZjExNWM3MGU5M2QzMmQxMDI4ZWJkMDYiLCJmb3JtYXQiOiJzdmNfdGltZXN0YW1wX3YxIiwia2V5X2lkIjoiNmUwZjVm'
            + 'N2I3MWVlZWJlMSIsImxvZ19vcmlnaW4iOiJzdmMvc3ZjLW5vZGUtNmUwZjVmN2I3MWVlZWJlMS90aW1lc3RhbXBzIiwibm9kZV9pZCI'
            + '6InN2Yy1ub2RlLTZlMGY1ZjdiNzFlZWViZTEiLCJzZXJpYWwiOjAsInRpbWUiOiIyMDI2LTExLTI5VDAxOjQzOjU0LjI4OFoifQ==',
          leaf_hash: '6kVnn0W5mZSGjlKwGhl8HxfjOV/9WrHRToegs1K6n2c=',
          root: '6kVnn0W5mZSGjlKwGhl8HxfjOV/9WrHRToegs1K6n2c=', inclusion_proof: [],
          checkpoint: 'svc/svc-node-6e0f5f7b71eeebe1/timestamps\n1\n6kVnn0W5mZSG'
            + 'jlKwGhl8HxfjOV/9WrHRToegs1K6n2c=\n\n— '
            + 'svc/svc-node-6e0f5f7b71eeebe1/timestamps 9x+uSMLEl1WdLP3PdWxTeCQ2+G18+eLCkU9jywz7ghvPqmqZw7Ul7URNdn9KQ3'
            + 'qGsv8qBAjftsU4knTEVLDUAwYvLA8=\n',
          public_key: PUBLIC_KEY, key_id: KEY_ID,
        },
        tlog_proof: 'c2sp.org/tlog-proof@v1\nindex 0\n\nsvc/svc-node-6e0f5f7b71eeebe1/timestamps\n1\n6kVnn0W5mZSGjlKwG'
          + 'hl8HxfjOV/9WrHRToegs1K6n2c=\n\n— svc/svc-node-6e0f5f7b71eeebe1/time'
          + 'stamps 9x+uSMLEl1WdLP3PdWxTeCQ2+G18+eL'
          + 'CkU9jywz7ghvPqmqZw7Ul7URNdn9KQ3qGsv8qBAjftsU4knTEVLDUAwYvLA8=\n',
      },
    },
  ],
  MACHINE_EVENT_LOG: [
    {
      args: {
        machine_id: MACHINE,
        quote_id: 'q1AaIk-Ri0AADqYAkBAAEAAAAAAJQAACAAAAAAAMsg7h8cdXQBF4iQxOLaAJ44iH3qBDMU6hijme4DvF0',
        plain_hex: '7b22636f756e74223a312c22686561645f68617368223a2261626162616261626162616261626162616261626162616261'
          + '626162616261626162616261626162616261626162616261626162616261626162616261626162222c2266726f6d223a223230323'
          + '62d30312d30315430303a30303a30305a222c22746f223a22323032362d30312d30315430303a30303a30305a227d',
      },
      result: {
        service: 'machine-event-log', command: 'MACHINE_EVENT_LOG',
        quote_id: 'q1AaIk-Ri0AADqYAkBAAEAAAAAAJQAACAAAAAAAMsg7h8cdXQBF4iQxOLaAJ44iH3qBDMU6hijme4DvF0',
        machine_id: MACHINE, units_charged: 52000, receipt_id: 'rcpt_33Zxc9FhtcMT0yuLK2Xt',
        result_tag: 'eda4a3c0eea4c7f4938d18a8eea46362846759668ffd0f69beb986bdbe8423ac', status: 'ok',
        input_digest: '308d4429f38c3633091a39123bec04db6d946536da10fcb7bf0a3e37a8d038e8',
        output_digest: '1aeae2bfa06723e7247e57ad0946bda9a2472996ade880e6563ef651381b0d0b',
        entry: {
          format: 'svc_machine_event_log_v1', log_origin: 'svc/svc-node-6e0f5f7b71eeebe1/machine-events', index: 0,
          machine_id: MACHINE,
          quote_id: 'q1AaIk-Ri0AADqYAkBAAEAAAAAAJQAACAAAAAAAMsg7h8cdXQBF4iQxOLaAJ44iH3qBDMU6hijme4DvF0',
          summary: {
            count: 1, head_hash: 'abababababababababababababababababababababababababababababababab',
            from: '2026-01-01T00:00:00Z', to: '2026-01-01T00:00:00Z',
          },
          appended_at: '2026-11-29T01:43:54.297Z',
        },
        log: {
          origin: 'svc/svc-node-6e0f5f7b71eeebe1/machine-events', leaf_index: 0, tree_size: 1,
          entry_base64: 'eyJhcHBlbmRlZF9hdCI6IjIwMjYtMTEtMjlUMDE6NDM6NTQuMjk3WiIsImZvcm1hdCI6InN2Y19tYWNoaW5lX2V2ZW50X'
            + '2xvZ192MSIsImluZGV4IjowLCJsb2dfb3JpZ2luIjoic3ZjL3N2Yy1ub2RlLTZlMGY1ZjdiNzFlZWViZTEvbWFjaGluZS1ldmVudHMi'
            + 'LCJtYWNoaW5lX2lkIjoibXktYWdlbnQiLCJxdW90ZV9pZCI6InExQWFJay1SaTBBQURxWUFrQkFBRUFBQUFBQUpRQUFDQUFBQUFBQU1'
            + 'zZzdoOGNkWFFCRjRpUXhPTGFBSjQ0aUgzcUJETVU2aGlqbWU0RHZGMCIsInN1bW1hcnkiOnsiY291bnQiOjEsImZyb20iOiIyMDI2LT'
            + 'AxLTAxVDAwOjAwOjAwWiIsImhlYWRfaGFzaCI6ImFiYWJhYmFiYWJhYmFiYWJhYmFiYWJhYmFiYWJhYmFiYWJhYmFiYWJhYmFiYWJhY'
            + 'mFiYWJhYmFiYWJhYmFiYWIiLCJ0byI6IjIwMjYtMDEtMDFUMDA6MDA6MDBaIn19',
          leaf_hash: 'zJk0vvQ0vVyRZf6u046aXhN2vLXdTT5EaI71Ww48qJc=',
          root: 'zJk0vvQ0vVyRZf6u046aXhN2vLXdTT5EaI71Ww48qJc=', inclusion_proof: [],
          checkpoint: 'svc/svc-node-6e0f5f7b71eeebe1/machine-events\n1\nzJk0vvQ0vVyRZf6u046aXhN2vLXdTT5EaI71Ww48qJc=\n'
            + '\n— svc/svc-node-6e0f5f7b71eeebe1/machine-events V3F0oTgSxFIZHZHo'
            + 'f48OMKLj0VSulU/5jmhiiKmZCfJCGVeYAMqaea'
            + 'Ag3sxOV7uYQsEVBNL6uCCvsjInZx6I+SqWHQU=\n',
          public_key: PUBLIC_KEY, key_id: KEY_ID,
        },
        tlog_proof: 'c2sp.org/tlog-proof@v1\nindex 0\n\nsvc/svc-node-6e0f5f7b71eeebe1/machine-events\n1\nzJk0vvQ0vVyRZ'
          + 'f6u046aXhN2vLXdTT5EaI71Ww48qJc=\n\n— svc/svc-node-6e0f5f7b71eeebe1/'
          + 'machine-events V3F0oTgSxFIZHZHof48OMKL'
          + 'j0VSulU/5jmhiiKmZCfJCGVeYAMqaeaAg3sxOV7uYQsEVBNL6uCCvsjInZx6I+SqWHQU=\n',
      },
    },
  ],
  VERIFY_RECEIPT: [
    {
      args: { machine_id: MACHINE, receipt_id: 'rcpt_eS2MijlXBVi9wurM0jFD' },
      result: {
        receipt_id: 'rcpt_eS2MijlXBVi9wurM0jFD',
        receipt: {
          format: 'svc_receipt_v1', receipt_id: 'rcpt_eS2MijlXBVi9wurM0jFD', service: 'get-pulse', command: 'GET_PULSE',
          quote_id: 'q1AaIk-RfiAADqYAABAAABAAAAAAAAACAAAAAAAFpVyFzKFTLxF4iQxOLaACJ0lVWarcvH22t6iJfxQlo',
          machine_id: MACHINE, units_charged: '23125', price_version: 'svcC_REF_USD_WORK_V6', quote_terms_version: 5,
          input_digest: '2e834e4cb6838f20743bf9f1265fcc289dc617f680a243379a2ec202b6eccdcf',
          output_digest: '3555b259063cdcdb421873cb5800e669450db9abdf31df8587d2227e4e45b46f', status: 'ok',
          issued_at: '2026-11-29T01:43:54.115Z', node_id: NODE_ID, key_id: KEY_ID,
          result_tag: 'e51c49407a834795439683802073986480aa31882e38c263c253b139fc34d0dc',
        },
        signature: 'aFNrckyTH5BV55BZ91uuWALsFVhgEoSARbqgL_uwnsxGeenLy57XyBCemRaLyxJ-vCqkS_BCScBACr65wXdKBg',
        alg: 'Ed25519', public_key: PUBLIC_KEY, key_id: KEY_ID, valid: true, key_valid_from: null,
        key_valid_until: null,
        signed_bytes: 'RFC 8785 canonical JSON of `receipt` (UTF-8); signature is base64url Ed25519 over those bytes',
      },
    },
  ],
  FUND_ACCOUNT: [
    {
      summary: 'the first invoice of a machine_id: it returns the machine token, once',
      args: { machine_id: MACHINE, units: 5, network: 'TRON', asset: 'USDT' },
      result: {
        invoice_id: 'inv_yFkhNk6W7PdG8hrmKN_a', machine_id: MACHINE, state: 'pending', units: 5,
        credit_units: '502689100', rail: 'USDT_TRON', network: 'TRON', asset: 'USDT', decimals: 6,
        pay_to: '<WALLET_ADDRESS>', amount_due: '5026891', amount_due_decimal: '5.026891',
        created_at: '2026-11-29T01:43:53.995Z', expires_at: '2026-11-29T02:43:53.995Z',
        machine_token: 'svcm_5HS7PlofcFN5Fa5wKUlIzbzW-ruqvMQicZCCcHaQ7mE',
      },
    },
  ],
  INVOICE_STATUS: [
    {
      summary: 'settled: the payment arrived and the units were credited',
      args: { invoice_id: 'inv_yFkhNk6W7PdG8hrmKN_a', machine_id: MACHINE },
      result: {
        invoice_id: 'inv_yFkhNk6W7PdG8hrmKN_a', machine_id: MACHINE, state: 'settled', units: 5,
        credit_units: '502689100', rail: 'USDT_TRON', network: 'TRON', asset: 'USDT', decimals: 6,
        pay_to: '<WALLET_ADDRESS>', amount_due: '5026891', amount_due_decimal: '5.026891',
        created_at: '2026-11-29T01:43:53.995Z', expires_at: '2026-11-29T02:43:53.995Z',
        settled_at: '2026-11-29T01:43:54.042Z',
        settlement_reference: '50d858e0985ecc7f60418aaf0cc5ab587f42c2570a884095a9e8ccacd0f6545c:0',
      },
    },
  ],
  HEALTH: [
    {
      args: {},
      result: {
        status: 'ok', version: '1.0.5', node_id: NODE_ID, store: { status: 'ok' }, pool: { threads: 1, in_flight: 0 },
        pulse: { chain_id: CHAIN_ID, latest_index: 0 },
      },
    },
  ],
  PAYMENT_INFO: [
    {
      args: {},
      result: {
        rails: [
          {
            rail: 'USDT_TRON', network: 'TRON', asset: 'USDT', decimals: 6, address: '<WALLET_ADDRESS>',
            takes_payments: true, settled_by: 'operator',
          },
          {
            rail: 'USDC_BASE', network: 'Base', asset: 'USDC', decimals: 6, address: '<WALLET_ADDRESS>',
            takes_payments: true, settled_by: 'operator',
          },
          {
            rail: 'USDC_SOLANA', network: 'Solana', asset: 'USDC', decimals: 6, address: '<WALLET_ADDRESS>',
            takes_payments: true, settled_by: 'operator',
          },
          {
            rail: 'USDT_SOLANA', network: 'Solana', asset: 'USDT', decimals: 6, address: '<WALLET_ADDRESS>',
            takes_payments: true, settled_by: 'operator',
          },
        ],
        payments: 'local', settlement: 'crypto only', reference_value_usd_per_svcC: '1.00', x402: null,
      },
    },
  ],
  PULSE: [
    {
      args: { index: 0 },
      result: {
        pulse: {
          format: 'svc_pulse_v1', chain_id: CHAIN_ID, index: 0, time_start: '2026-11-29T01:43:53.880Z',
          period_ms: 60000, status: 'genesis',
          commit: 'd5800c79eb2321af31c199e3a96fb7388028f87ad3ba33f45053122af8fe378a',
          commit_next: 'a888f75a9a83e982522a8b144dd31a0d543241e2736f4e3bf7ba62b37393e034', revealed_index: null,
          revealed_seed: null, prev_output: null, node_id: NODE_ID, key_id: KEY_ID,
        },
        signature: 'u8MIm5br9ZMlkZhOlBvqFI8UCqJCVdZHfDEYSMkd0dVRmL4mCNOTVg2qpCvsc7Keg7RVwptRzxbmmlLsuzenBA',
        output_hash: '448c2000bc04bedd02af35406a691437bba03ce9618c041e6e555c8ec7569c1a', public_key: PUBLIC_KEY,
        node_keys: [
          {
            key_id: KEY_ID, alg: 'Ed25519', public_key: PUBLIC_KEY, valid_from: null, valid_until: null,
            status: 'current',
          },
        ],
      },
    },
  ],
  SANDBOX_QUOTE: [
    {
      args: { bits: 256 },
      result: {
        sandbox: true, quote_id: 'sbx_q_VQZTAKdo-RlyURMIn1Qc', service: 'get-pulse', machine_id: 'sandbox_machine',
        state: 'issued', bits: 256, max_output: 8192, quote_units: 0, settlement: 'none',
        expires_at: '2026-11-29T01:48:54.352Z', ttl_seconds: 300,
      },
    },
  ],
  SANDBOX_ACCEPT: [
    {
      args: { quote_id: 'sbx_q_VQZTAKdo-RlyURMIn1Qc', machine_id: 'sandbox_machine' },
      result: {
        sandbox: true, quote_id: 'sbx_q_VQZTAKdo-RlyURMIn1Qc', machine_id: 'sandbox_machine', state: 'accepted',
        expires_at: '2026-11-29T01:48:54.352Z',
      },
    },
  ],
  SANDBOX_EXECUTE: [
    {
      args: { machine_id: 'sandbox_machine', quote_id: 'sbx_q_VQZTAKdo-RlyURMIn1Qc' },
      result: {
        sandbox: true, quote_id: 'sbx_q_VQZTAKdo-RlyURMIn1Qc', machine_id: 'sandbox_machine', bits: 256,
        output_hex: '90b763d2dae04848406ef438c39b4fa1ec67d1b8ca955932026bddb6843e53d2',
        receipt_id: 'sbx_rcpt_z7p4tZpRS6TBPDKsLLJ_', units_charged: 0,
      },
    },
  ],
  SANDBOX_VERIFY: [
    {
      args: { machine_id: 'sandbox_machine', receipt_id: 'sbx_rcpt_z7p4tZpRS6TBPDKsLLJ_' },
      result: {
        sandbox: true, receipt_id: 'sbx_rcpt_z7p4tZpRS6TBPDKsLLJ_', valid: true,
        receipt: {
          format: 'svc_sandbox_receipt_v1', receipt_id: 'sbx_rcpt_z7p4tZpRS6TBPDKsLLJ_', service: 'get-pulse',
          quote_id: 'sbx_q_VQZTAKdo-RlyURMIn1Qc', machine_id: 'sandbox_machine', bits: 256, units_charged: '0',
          settlement: 'none (sandbox)',
          output_digest: '581c6422b18d34f75abfd969620743a3db0ac355ff6901cd81067b968efe7832',
          issued_at: '2026-11-29T01:43:54.355Z', key_id: 'c2db4f6807dc6202',
        },
        signature: 'hpF6VtmzihUQ58riuozMtDzSVsdItxV2HKaN3uTe_YVvItzdYavo9cmOqayk7HAAlY8OEh0YaBN_Oy-fiJHdDg',
        alg: 'Ed25519', public_key: 'SATu6TO3Ie52qnuZ0mRpCMHYqNIqqWKWgEsfO3l8bgI', key_id: 'c2db4f6807dc6202',
        issuer: 'this service (sandbox key, made at start)',
      },
    },
  ],
} as const satisfies Record<string, readonly CallExample[]>;

/**
 * x402 at the paid executions (docs/x402.md), recorded from a node with it on: anvil serving as chain
 * eip155:8453 with the test port of USDC at its first deployment address, and a machine_id of its own (its quote
 * is not the story's above). A GET_PULSE's 402 (its message and its PaymentRequired, as the PAYMENT-REQUIRED
 * header and error.details.payment_required carry it), the PAYMENT-SIGNATURE an x402 client sent for it, and
 * the SettleResponse of the PAYMENT-RESPONSE header beside the paid result.
 */
const X402_QUOTE = 'q1AaIljfoAAADqYAABAAABAAAAAAAAAABAAAAAAFpVSpKaiLokf0aGvM65AHYNLWxdIC4k3CYgUjur5aw';
const X402_ACCEPTS = {
  scheme: 'exact', network: 'eip155:8453', asset: '0x5fbdb2315678afecb367f032d93f642f64180aa3', amount: '232',
  payTo: '0xa0ee7a142d267c1f36714e4a8f75612f20a79720', maxTimeoutSeconds: 120,
  extra: { name: 'USD Coin', version: '2', quote_id: X402_QUOTE },
} as const;

export const X402_EXAMPLE = {
  message: 'this execution costs 23125 units: pay it with x402 (the PAYMENT-REQUIRED header), or fund a machine'
    + ' and accept the quote with its token',
  payment_required: {
    x402Version: 2,
    resource: {
      url: 'https://svc.example.test/api/v1/executions/get-pulse', mimeType: 'application/json',
      description: `get-pulse execution of quote ${X402_QUOTE}`,
    },
    accepts: [X402_ACCEPTS],
  },
  payment_signature:
    'eyJ4NDAyVmVyc2lvbiI6MiwiYWNjZXB0ZWQiOnsic2NoZW1lIjoiZXhhY3QiLCJuZXR3b3JrIjoiZWlwMTU1Ojg0NTMiLCJh'
    + 'c3NldCI6IjB4NWZiZGIyMzE1Njc4YWZlY2IzNjdmMDMyZDkzZjY0MmY2NDE4MGFhMyIsImFtb3VudCI6IjIzMiIsInBheVRv'
    + 'IjoiMHhhMGVlN2ExNDJkMjY3YzFmMzY3MTRlNGE4Zjc1NjEyZjIwYTc5NzIwIiwibWF4VGltZW91dFNlY29uZHMiOjEyMCwi'
    + 'ZXh0cmEiOnsibmFtZSI6IlVTRCBDb2luIiwidmVyc2lvbiI6IjIiLCJxdW90ZV9pZCI6InExQWFJbGpmb0FBQURxWUFBQkFB'
    + 'QUJBQUFBQUFBQUFBQkFBQUFBQUZwVlNwS2FpTG9rZjBhR3ZNNjVBSFlOTFd4ZElDNGszQ1lnVWp1cjVhdyJ9fSwicGF5bG9h'
    + 'ZCI6eyJzaWduYXR1cmUiOiIweGFhZWIxYWIwYzZjZTgxMTYyNzFmMWMxNjUxMzg3YTBkNWExNzc5MGRjZGZjYTMxYmI0NDJi'
    + 'MmFiMTI5ZWJjMDIzMzdkMDlkYzljMWMzZjM2MzNkMjRhZWZiNGYzNDVlMzNhMzBiNjg1NmVmZDRhOGFkM2EzNGQ5ZWRmM2Ix'
    + 'ZTkzMWMiLCJhdXRob3JpemF0aW9uIjp7ImZyb20iOiIweDcwOTk3OTcwQzUxODEyZGMzQTAxMEM3ZDAxYjUwZTBkMTdkYzc5'
    + 'QzgiLCJ0byI6IjB4YTBlZTdhMTQyZDI2N2MxZjM2NzE0ZTRhOGY3NTYxMmYyMGE3OTcyMCIsInZhbHVlIjoiMjMyIiwidmFs'
    + 'aWRBZnRlciI6IjAiLCJ2YWxpZEJlZm9yZSI6IjE3OTU5MjY1MTEiLCJub25jZSI6IjB4MTY2YzExZTAyMzFlOTU4MjY5ZTgz'
    + 'ZTcwNDBmMzIwZDZmYzE1MzYwZDA5ODQ4ZDAxYzAzYTMyM2U0N2VhMzdmOCJ9fX0=',
  settle_response: {
    success: true, transaction: '0x23ef7ce1fdcae519ee8dd87fc07dccc05396141318bd554f9e3ccd4ae5653606',
    network: 'eip155:8453', payer: '0x70997970c51812dc3a010c7d01b50e0d17dc79c8',
  },
} as const;
