// sessionarg.mjs <cwd> <sessionDir|-> <arg>...
//
// Prints ONE JSON object on stdout mapping each arg to the session file
// `pi --fork <arg>` (and so `pi --session <arg>`, which resolves the same
// way: resolveSessionPath in dist/main.js) starts from, run in cwd with
// sessionDir as pi's --session-dir ("-" for none: pi's default store under
// $PI_CODING_AGENT_DIR), or {"notFound": message} where pi says no session
// matches. pi's own createSessionManager runs; the fork it writes is
// removed again. Needs Node 22.
import { rmSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const ORACLE_VERSION = "1.6.0";

function oracleDir() {
	if (process.env.PIFS_ORACLE_DIR) return process.env.PIFS_ORACLE_DIR;
	const cache = process.env.XDG_CACHE_HOME || join(homedir(), ".cache");
	return join(cache, "pifs", `oracle-${ORACLE_VERSION}`);
}

const distDir = join(oracleDir(), "node_modules", "@earendil-works", "pi-coding-agent", "dist");
const { createSessionManager } = await import(pathToFileURL(join(distDir, "main.js")).href);

const [cwd, dirArg, ...args] = process.argv.slice(2);
if (!cwd || !dirArg || args.length === 0) {
	process.stderr.write("usage: sessionarg.mjs <cwd> <sessionDir|-> <arg>...\n");
	process.exit(2);
}
const sessionDir = dirArg === "-" ? undefined : dirArg;

// pi exits when nothing matches: make that an exception carrying what it
// printed.
class Exit extends Error {}
let printed = "";
const realExit = process.exit;
const realError = console.error;
process.exit = (code) => {
	throw new Exit(`exit ${code}: ${printed}`);
};
console.error = (...a) => {
	printed += a.join(" ");
};

const out = {};
for (const arg of args) {
	printed = "";
	try {
		const sm = await createSessionManager({ fork: arg }, cwd, sessionDir, undefined);
		out[arg] = sm.getHeader()?.parentSession ?? null;
		const file = sm.getSessionFile();
		if (file) rmSync(file, { force: true });
	} catch (err) {
		if (!(err instanceof Exit)) throw err;
		out[arg] = { notFound: err.message };
	}
}
process.exit = realExit;
console.error = realError;
process.stdout.write(JSON.stringify(out));
