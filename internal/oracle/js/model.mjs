// model.mjs — a long-running pi for the model-based test (fs/model_test.go).
//
// Reads one JSON request per line on stdin and answers each with one JSON
// line on stdout:
//
//   {"op":"dump","file":F,"all":bool}  pi's view of F, exactly as dump.mjs prints it
//                                      (dump.mjs's own code, run in this process, so
//                                      that a dump costs no node start-up)
//   {"op":"pi","file":F,"kind":K,...}  an append by pi's own SessionManager, kept open
//                                      on F between requests as a running pi keeps it:
//                                      K is user, assistant, model, thinking, label,
//                                      name, custom or branch (sm.branch(to) first,
//                                      then a user message); answers {"id":…}
//   {"op":"reopen","file":F}           forget the SessionManager of F (pi restarted)
//
// An error answers {"error":"…"}.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";

const oracleDir = process.env.PIFS_ORACLE_DIR;
const coreDir = join(oracleDir, "node_modules", "@earendil-works", "pi-coding-agent", "dist", "core");
const { SessionManager } = await import(pathToFileURL(join(coreDir, "session-manager.js")).href);

// dump.mjs as a function of (process): its static imports become dynamic
// ones, and it writes to the process object it is given.
const dumpSource = readFileSync(join(dirname(fileURLToPath(import.meta.url)), "dump.mjs"), "utf8").replace(
	/^import \{([^}]*)\} from ("[^"]+");$/gm,
	"const {$1} = await import($2);",
);
const AsyncFunction = (async () => {}).constructor;
const dumpFn = new AsyncFunction("process", "__import", dumpSource.replaceAll("await import(", "await __import("));

async function dump(file, all) {
	let text = "";
	const fake = {
		argv: ["node", "dump.mjs", file, ...(all ? ["--all-contexts"] : [])],
		env: process.env,
		exit: (code) => {
			throw new Error(`dump.mjs exited with ${code}`);
		},
		stderr: process.stderr,
		stdout: { write: (s) => (text += s) },
	};
	await dumpFn(fake, (m) => import(m));
	return text.trim();
}

const managers = new Map();
function manager(file) {
	let sm = managers.get(file);
	if (!sm) {
		sm = SessionManager.open(file, dirname(file));
		managers.set(file, sm);
	}
	return sm;
}

const usage = (n) => ({
	input: n,
	output: 2 * n,
	cacheRead: 0,
	cacheWrite: 1,
	totalTokens: 3 * n + 1,
	cost: { input: n / 1000, output: n / 500, cacheRead: 0, cacheWrite: 0, total: (3 * n) / 1000 },
});

function piAppend(req) {
	const sm = manager(req.file);
	const text = req.text ?? "";
	switch (req.kind) {
		case "user":
			return sm.appendMessage({ role: "user", content: [{ type: "text", text }], timestamp: Date.now() });
		case "assistant":
			return sm.appendMessage({
				role: "assistant",
				content: [{ type: "text", text }],
				api: "anthropic-messages",
				provider: "anthropic",
				model: "claude-model",
				usage: usage(req.n ?? 10),
				stopReason: "stop",
				timestamp: Date.now(),
			});
		case "model":
			return sm.appendModelChange("openai", text || "gpt-x");
		case "thinking":
			return sm.appendThinkingLevelChange(text || "high");
		case "label":
			return sm.appendLabelChange(req.to, req.label);
		case "name":
			return sm.appendSessionInfo(text);
		case "custom":
			return sm.appendCustomEntry("model.test", { text });
		case "branch":
			sm.branch(req.to);
			return sm.appendMessage({ role: "user", content: [{ type: "text", text }], timestamp: Date.now() });
		default:
			throw new Error(`unknown kind ${req.kind}`);
	}
}

const rl = createInterface({ input: process.stdin });
for await (const line of rl) {
	let answer;
	try {
		const req = JSON.parse(line);
		switch (req.op) {
			case "dump":
				answer = await dump(req.file, !!req.all);
				break;
			case "pi":
				answer = JSON.stringify({ id: piAppend(req) });
				break;
			case "reopen":
				managers.delete(req.file);
				answer = "{}";
				break;
			default:
				throw new Error(`unknown op ${req.op}`);
		}
	} catch (e) {
		answer = JSON.stringify({ error: e instanceof Error ? e.stack : String(e) });
	}
	process.stdout.write(`${answer}\n`);
}
