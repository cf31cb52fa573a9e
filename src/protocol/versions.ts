// Version strings from the contract (SPEC "Versioning"). Binding: every surface reads them here.

export const VERSIONS = {
  api: 'v1.0.5',
  pathPrefix: '/api/v1',
  discovery: '1.0.5',
  clientKit: 'v1.0.5',
  gateway: '1.0.5',
  mcpServer: '1.0.5',
  coreProtocol: 'svc/1',
  manifestFormat: 'svc_public_discovery_v1',
  pricebookPointerFormat: 'svc_pricebook_pointer_v1',
  priceVersion: 'svcC_REF_USD_WORK_V6',
  quoteTermsVersion: 5,
  capabilityCount: 21,
} as const;

/** The core's own release, reported by HELLO, CAPS and HEALTH: the gateway version it ships with. */
export const CORE_VERSION = VERSIONS.gateway;
