// export.mjs <session.jsonl>...
//
// Prints ONE JSON object on stdout mapping each file given to
// {"exports": {...}, "ids": [...]}: exports maps every string entry id of
// the file to the text pi's /export x.jsonl writes for the session with that
// entry as its leaf (serializeSessionBranch in dist/core/session-export.js,
// after SessionManager.branch(id)), and "@leaf" to the export of the session
// as pi opens it (its leaf the last entry). An id pi cannot export maps to
// {"error": message}; one on a parent cycle (pi's getBranch loops forever
// on it) to {"error": "cycle"}. ids are the ids of getEntries(), in order
// (null where an entry has no string id): pi draws random ones when it
// migrates a version 1 file. A file pi cannot open maps to {"error": message}.
//
// The files given are never touched: SessionManager.open rewrites v1/v2
// files and ends an unterminated last line, so a copy is opened.
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { basename, join } from "node:path";
import { pathToFileURL } from "node:url";

const ORACLE_VERSION = "1.6.0";

function oracleDir() {
	if (process.env.PIFS_ORACLE_DIR) return process.env.PIFS_ORACLE_DIR;
	const cache = process.env.XDG_CACHE_HOME || join(homedir(), ".cache");
	return join(cache, "pifs", `oracle-${ORACLE_VERSION}`);
}

const coreDir = join(oracleDir(), "node_modules", "@earendil-works", "pi-coding-agent", "dist", "core");
const { SessionManager } = await import(pathToFileURL(join(coreDir, "session-manager.js")).href);
const { serializeSessionBranch } = await import(pathToFileURL(join(coreDir, "session-export.js")).href);

const files = process.argv.slice(2);
if (files.length === 0) {
	process.stderr.write("usage: export.mjs <session.jsonl>...\n");
	process.exit(2);
}

function exportAll(src) {
	const tmp = mkdtempSync(join(tmpdir(), "pifs-export-"));
	try {
		const copy = join(tmp, basename(src));
		copyFileSync(src, copy);
		const sm = SessionManager.open(copy);
		const byId = new Map();
		for (const e of sm.getEntries()) byId.set(e.id, e);
		// A walk up from id that meets an entry twice is on a cycle.
		const cyclic = (id) => {
			const seen = new Set();
			for (let e = byId.get(id); e; e = e.parentId ? byId.get(e.parentId) : undefined) {
				if (seen.has(e)) return true;
				seen.add(e);
			}
			return false;
		};
		const exports = {};
		const leaf = sm.getLeafId();
		exports["@leaf"] = leaf !== null && leaf !== undefined && cyclic(leaf) ? { error: "cycle" } : serializeSessionBranch(sm);
		const ids = sm.getEntries().map((e) => (typeof e.id === "string" ? e.id : null));
		for (const id of ids) {
			if (id === null) continue;
			if (cyclic(id)) {
				exports[id] = { error: "cycle" };
				continue;
			}
			try {
				sm.branch(id);
				exports[id] = serializeSessionBranch(sm);
			} catch (err) {
				exports[id] = { error: String(err?.message ?? err) };
			}
		}
		return { exports, ids };
	} catch (err) {
		return { error: String(err?.message ?? err) };
	} finally {
		rmSync(tmp, { recursive: true, force: true });
	}
}

const out = {};
for (const f of files) out[f] = exportAll(f);
process.stdout.write(JSON.stringify(out));
