// files.mjs (run with node; HOME is the home pi's tools expand "~" to)
//
// Reads a JSON array of session file paths on stdin and prints a JSON
// array of answers, one per file, each what pi 1.6's own code finds in it:
//
//   {"lists": {ID: {"readFiles": [...], "modifiedFiles": [...]}},
//    "ops": {ID: {"read": [...], "written": [...], "edited": [...]}},
//    "resolved": {PATH: ABS}}
//
// lists: for every entry ID, the file lists of a branch summary of the
// path root→ID: prepareBranchEntries (no token budget) over
// sm.getBranch(ID), then computeFileLists; {"error": "..."} where pi
// throws (it estimates the tokens of every message, and a message whose
// content is null has none to count).
// ops: for every message entry ID whose message names a file,
// extractFileOpsFromMessage of that message alone, each set in insertion
// order.
// resolved: every path those ops name, as the tools resolve it
// (resolveToCwd in tools/path-utils.js) against the header's cwd; null
// where it throws (a file:// URL with a host).
//
// The file is read from a copy; an answer that threw is {"error": "..."}.
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { pathToFileURL } from "node:url";
import { coreDir } from "./pi.mjs";

const imp = (p) => import(pathToFileURL(p).href);
const { SessionManager } = await imp(join(coreDir(), "session-manager.js"));
const { prepareBranchEntries } = await imp(join(coreDir(), "compaction", "branch-summarization.js"));
const { computeFileLists, createFileOps, extractFileOpsFromMessage } = await imp(join(coreDir(), "compaction", "utils.js"));
const { resolveToCwd } = await imp(join(coreDir(), "tools", "path-utils.js"));

const files = JSON.parse(await new Promise((resolve) => {
	let s = "";
	process.stdin.on("data", (d) => (s += d));
	process.stdin.on("end", () => resolve(s));
}));

const answers = [];
for (const file of files) {
	const dir = mkdtempSync(join(tmpdir(), "pifs-files-"));
	try {
		const copy = join(dir, basename(file));
		copyFileSync(file, copy);
		const sm = SessionManager.open(copy, dir);
		const cwd = sm.getHeader()?.cwd ?? "";
		const lists = {};
		const ops = {};
		const resolved = {};
		for (const e of sm.getEntries()) {
			if (typeof e.id !== "string") continue;
			try {
				lists[e.id] = computeFileLists(prepareBranchEntries(sm.getBranch(e.id)).fileOps);
			} catch (err) {
				lists[e.id] = { error: err instanceof Error ? err.message : String(err) };
			}
			if (e.type !== "message") continue;
			const o = createFileOps();
			extractFileOpsFromMessage(e.message, o);
			if (o.read.size + o.written.size + o.edited.size === 0) continue;
			ops[e.id] = { read: [...o.read], written: [...o.written], edited: [...o.edited] };
			for (const p of [...o.read, ...o.written, ...o.edited]) {
				try {
					resolved[p] = resolveToCwd(p, cwd);
				} catch {
					resolved[p] = null;
				}
			}
		}
		answers.push({ lists, ops, resolved });
	} catch (e) {
		answers.push({ error: e instanceof Error ? e.message : String(e) });
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}
process.stdout.write(JSON.stringify(answers), () => process.exit(0));
