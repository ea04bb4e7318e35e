/** Types of scripts/buildService.mjs (plain JavaScript: it runs before any build). */
export declare const ROOT: string;
export declare function outDirOf(root: string): string;
export declare function compiledFileOf(source: string, root?: string): string | null;
export declare function staleSources(root?: string): string[];
export declare function buildStaleSources(root?: string): Promise<number>;
export declare function runCompiled(entry: string, root?: string): Promise<void>;
