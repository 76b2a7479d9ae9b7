// Types of scripts/ts-loader/cache.mjs, for test/ts-loader.test.ts.
export declare const cacheFolder: string
export declare function pruneCache (days?: number, now?: number, folder?: string): void
