// pi-open.mjs SESSION.jsonl — what pi 1.6 does to resume a session:
// SessionManager.open (which parses the whole file) and
// buildSessionContext at the leaf; then append one entry through pi and
// build the context again (pi keeps the session in memory). Prints one JSON
// line, like bench/pifs-open.
import { homedir } from "node:os";
import { join } from "node:path";
import { statSync } from "node:fs";
import { pathToFileURL } from "node:url";

const dir = process.env.PIFS_ORACLE_DIR || join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "pifs", "oracle-1.6.0");
const { SessionManager } = await import(pathToFileURL(join(dir, "node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js")).href);

const path = process.argv[2];
let t = process.hrtime.bigint();
const sm = SessionManager.open(path);
const ctx = JSON.stringify(sm.buildSessionContext());
const firstMs = Number(process.hrtime.bigint() - t) / 1e6;

t = process.hrtime.bigint();
sm.appendMessage({ role: "user", content: [{ type: "text", text: "one more" }], timestamp: Date.now() });
const ctx2 = JSON.stringify(sm.buildSessionContext());
const rereadMs = Number(process.hrtime.bigint() - t) / 1e6;

console.log(JSON.stringify({
	tool: "pi", entries: sm.getEntries().length, bytes: statSync(path).size,
	firstMs, rereadMs, contextBytes: ctx.length, contextBytesAfter: ctx2.length,
	maxRssMB: process.resourceUsage().maxRSS / 1024,
}));
