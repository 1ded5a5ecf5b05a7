// pi-loop.mjs LIST [NEEDLE] — what pi 1.6 does to show each session of a
// list: SessionManager.open (which parses the whole file) and
// buildSessionContext at the leaf, one file after the other. LIST holds one
// path a line. With NEEDLE, also counts the sessions whose context (as
// JSON) contains it. Prints one JSON line.
import { homedir } from "node:os";
import { join } from "node:path";
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const dir = process.env.PIFS_ORACLE_DIR || join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "pifs", "oracle-1.6.0");
const { SessionManager } = await import(pathToFileURL(join(dir, "node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js")).href);

const files = readFileSync(process.argv[2], "utf8").split("\n").filter(Boolean);
const needle = process.argv[3];
let matched = 0;
let entries = 0;
const t = process.hrtime.bigint();
for (const path of files) {
	const sm = SessionManager.open(path);
	const ctx = JSON.stringify(sm.buildSessionContext());
	entries += sm.getEntries().length;
	if (needle && ctx.includes(needle)) matched++;
}
const ms = Number(process.hrtime.bigint() - t) / 1e6;
console.log(JSON.stringify({ files: files.length, entries, matched, ms, maxRssMB: process.resourceUsage().maxRSS / 1024 }));
