// Which head a chain reader trusts (docs/settlement.md "Finality"): the node's `finalized`, `safe` or `latest`
// block, less a number of confirmations. The watchers' setting and x402's (SVC_WATCH_*_FINALITY, SVC_X402_FINALITY).
export type Finality = 'finalized' | 'safe' | 'latest';
