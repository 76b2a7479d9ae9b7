// Types of scripts/check-layers.mjs, for test/layers.test.ts.
export declare const layers: string[][]
export declare function layerProblems (sources: Iterable<[string, string]>): string[]
export declare function sourcesIn (dir: string): [string, string][]
