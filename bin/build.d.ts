/** A digest of the sources under `root` (the package's by default): a new one means a new build. */
export function sourceStamp(root?: string): string;
/** The directory of the build of the sources under `root` as they are now, made if there is none. */
export function currentBuild(root?: string): Promise<string>;
