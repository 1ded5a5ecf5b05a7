// pi.mjs: where the installed pi oracle lives. No side effects.
import { homedir } from "node:os";
import { join } from "node:path";

export const ORACLE_VERSION = "1.6.0";

export function oracleDir() {
	if (process.env.PIFS_ORACLE_DIR) return process.env.PIFS_ORACLE_DIR;
	const cache = process.env.XDG_CACHE_HOME || join(homedir(), ".cache");
	return join(cache, "pifs", `oracle-${ORACLE_VERSION}`);
}

/** The dist dir of the installed pi package. */
export function distDir() {
	return join(oracleDir(), "node_modules", "@earendil-works", "pi-coding-agent", "dist");
}

/** The dist/core dir of the installed pi package. */
export function coreDir() {
	return join(distDir(), "core");
}
