// The package's root directory, wherever the code runs from: src/ (the sources, through tsx) or build/js/
// (their compiled JavaScript, src/tools/build-js.mjs). Files that live beside the code (build/kernels.wasm,
// package.json) are found from it, never by a relative path only one of the two layouts has.
import { fileURLToPath } from 'node:url';

/** This module is compiled JavaScript under build/js (the launchers run it when it is current). */
export const COMPILED = /\/build\/js\/[^/]+$/.test(import.meta.url);

export const PACKAGE_ROOT: string = fileURLToPath(new URL(COMPILED ? '../../' : '../', import.meta.url));

/** A sibling module's file name as this layout has it: `.ts` in the sources, `.js` when compiled. */
export const moduleFile = (stem: string): string => `${stem}${COMPILED ? '.js' : '.ts'}`;
