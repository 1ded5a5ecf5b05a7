// pi_append.mjs FILE TAG N GOFILE
//
// Appends N user messages "node TAG i" to a session file through pi's own
// SessionManager, as pi does while it works. It opens the session, prints
// "ready", waits until GOFILE exists, then appends with short pauses so that
// its writes interleave with those of other writers.
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";

const { SessionManager } = await import(
	pathToFileURL(join(process.env.PIFS_ORACLE_DIR, "node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js")).href
);
const [file, tag, n, goFile] = process.argv.slice(2);
const sm = SessionManager.open(file, dirname(file));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
console.log("ready");
while (!existsSync(goFile)) await sleep(5);
for (let i = 0; i < Number(n); i++) {
	sm.appendMessage({ role: "user", content: [{ type: "text", text: `node ${tag} ${i}` }], timestamp: Date.now() });
	await sleep(1 + (i % 3));
}
