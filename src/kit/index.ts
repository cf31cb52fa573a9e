// svc: the embedding kit in one import — the kernels (svc/kernels) and the offline verifiers
// (svc/verify). docs/embedding.md is its guide.
export * from './kernels.ts';
export * from './verify-api.ts';
