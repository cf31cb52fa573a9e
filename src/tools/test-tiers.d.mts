/** The quick tier's test files, relative to `root`, in order (test-tiers.mjs). */
export function quickTier(root: string): string[];
