// @svc/kit: the embedding kit in one import — the kernels (@svc/kit/kernels) and the offline verifiers
// (@svc/kit/verify). docs/embedding.md is its guide here; README.md (this folder's) is the package's own.
export * from './kernels.ts';
export * from './verify-api.ts';
