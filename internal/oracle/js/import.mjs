// import.mjs <sessionDir> <file>...
//
// Prints ONE JSON object on stdout mapping each file given to the path
// pi's /import would copy it to (AgentSessionRuntime.importFromJsonl in
// dist/core/agent-session-runtime.js) in a session whose folder is
// sessionDir: its base name, or NAME-1.jsonl, NAME-2.jsonl… when taken.
// pi's own method runs on a stand-in runtime whose session_before_switch
// cancels the import, so nothing is copied: the path is what pi hands that
// event. A file pi refuses maps to {"error": message}.
import { homedir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const ORACLE_VERSION = "1.6.0";

function oracleDir() {
	if (process.env.PIFS_ORACLE_DIR) return process.env.PIFS_ORACLE_DIR;
	const cache = process.env.XDG_CACHE_HOME || join(homedir(), ".cache");
	return join(cache, "pifs", `oracle-${ORACLE_VERSION}`);
}

const coreDir = join(oracleDir(), "node_modules", "@earendil-works", "pi-coding-agent", "dist", "core");
const { AgentSessionRuntime } = await import(pathToFileURL(join(coreDir, "agent-session-runtime.js")).href);

const [sessionDir, ...files] = process.argv.slice(2);
if (!sessionDir || files.length === 0) {
	process.stderr.write("usage: import.mjs <sessionDir> <file>...\n");
	process.exit(2);
}
const out = {};
for (const f of files) {
	let dest;
	const runtime = {
		session: { sessionManager: { getSessionDir: () => sessionDir }, sessionFile: undefined },
		emitBeforeSwitch: async (_reason, path) => {
			dest = path;
			return { cancelled: true };
		},
	};
	try {
		const result = await AgentSessionRuntime.prototype.importFromJsonl.call(runtime, f);
		out[f] = result.cancelled && dest ? dest : { error: "not cancelled" };
	} catch (err) {
		out[f] = { error: String(err?.message ?? err) };
	}
}
process.stdout.write(JSON.stringify(out));
