/** Rewrites each runtime entry under `srcFolder` as one bundled file, in place (`skipMissing`: leave out entries the tree lacks). */
export declare function bundleRuntimeEntries(srcFolder: string, options?: { skipMissing?: boolean }): Promise<void>;
