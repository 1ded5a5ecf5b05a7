// pi_create.mjs default|flat STORE CWD
//
// Creates one session for CWD through pi's own SessionManager, as a first
// pi run does, and prints its file. default: STORE is pi's default store
// (PI_CODING_AGENT_DIR is its parent, so pi makes STORE/--cwd--/);
// flat: STORE is a directory the user chose (pi makes STORE itself).
// Neither needs STORE to exist.
import { basename, dirname, join } from "node:path";
import { pathToFileURL } from "node:url";

const [mode, store, cwd] = process.argv.slice(2);
if (mode === "default") {
	if (basename(store) !== "sessions") throw new Error("the default store is <agent dir>/sessions");
	process.env.PI_CODING_AGENT_DIR = dirname(store);
}
const { SessionManager } = await import(
	pathToFileURL(join(process.env.PIFS_ORACLE_DIR, "node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js")).href
);
const sm = SessionManager.create(cwd, mode === "flat" ? store : undefined);
// pi writes the file at the first message.
sm.appendMessage({ role: "user", content: "first run", timestamp: Date.now() });
sm.appendMessage({
	role: "assistant",
	content: [{ type: "text", text: "hello" }],
	api: "anthropic-messages",
	provider: "anthropic",
	model: "claude-sonnet-4-5",
	usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
	stopReason: "stop",
	timestamp: Date.now(),
});
console.log(sm.getSessionFile());
