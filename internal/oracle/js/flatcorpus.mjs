// flatcorpus.mjs <dir> [--mixed]
//
// Writes sessions with pi's OWN SessionManager (@earendil-works/pi-coding-agent
// 1.6.0) in a directory the user chose (pi --session-dir DIR,
// $PI_CODING_AGENT_SESSION_DIR, "sessionDir" in settings.json): pi writes
// them all flat into <dir>, whatever their cwd.
//
// With --mixed, <dir> must be named "sessions": it is then also pi's default
// store (the agent dir being its parent), and pi first writes sessions there
// in its default layout, one folder per cwd, then flat ones at the top, as
// when a user sets sessionDir to ~/.pi/agent/sessions after using the default.
//
// Both hold several cwds (some with spaces, dots, colons, unicode), named
// sessions, a fork into another cwd (SessionManager.forkFrom, pi --fork) and a
// clone at an entry (createBranchedSession, pi /clone), each appended to
// afterwards; plus two top-level files that are not sessions (a .jsonl whose
// first entry is no header, and a .txt), which pi does not list.
//
// Clock and randomness are faked (fake.mjs): the output is reproducible.
// Prints the .jsonl files written, one absolute path a line, sorted.
import { clock } from "./fake.mjs";
import { mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { coreDir } from "./pi.mjs";

const args = process.argv.slice(2);
const mixed = args.includes("--mixed");
const rest = args.filter((a) => a !== "--mixed");
if (rest.length !== 1) {
	process.stderr.write("usage: flatcorpus.mjs <dir> [--mixed]\n");
	process.exit(2);
}
const dir = resolve(rest[0]);
if (mixed && basename(dir) !== "sessions") {
	process.stderr.write("flatcorpus.mjs: with --mixed the dir must be named sessions (pi's default store)\n");
	process.exit(2);
}
mkdirSync(dir, { recursive: true });
if (mixed) process.env.PI_CODING_AGENT_DIR = dirname(dir);

const { SessionManager } = await import(pathToFileURL(join(coreDir(), "session-manager.js")).href);

const usage = (input, output) => ({
	input,
	output,
	cacheRead: 0,
	cacheWrite: 0,
	totalTokens: input + output,
	cost: { input: input * 3e-6, output: output * 15e-6, cacheRead: 0, cacheWrite: 0, total: input * 3e-6 + output * 15e-6 },
});
const user = (content) => ({ role: "user", content, timestamp: clock.peek() });
const assistant = (text) => ({
	role: "assistant",
	content: [{ type: "text", text }],
	api: "anthropic-messages",
	provider: "anthropic",
	model: "claude-sonnet-4-5",
	usage: usage(1000, 200),
	stopReason: "stop",
	timestamp: clock.peek(),
});
function chat(sm, ...turns) {
	let last;
	for (const [q, a] of turns) {
		last = sm.appendMessage(user(q));
		if (a !== undefined) last = sm.appendMessage(assistant(a));
	}
	return last;
}

const PROJ = "/home/user/proj";
const OTHER = "/home/user/other";
const TRICKY = "/tmp/with space/v1.2:beta/ünïcødé";
const ROOT = "/";

/** Sessions one user writes in one layout; sessionDir undefined = pi's default layout. */
function write(sessionDir, tag) {
	const a = SessionManager.create(PROJ, sessionDir);
	a.appendModelChange("anthropic", "claude-sonnet-4-5");
	const a1 = chat(a, [`${tag}: fix the build`, "Fixed: a missing import."], ["Now run the tests", "All green."]);
	a.appendSessionInfo(`${tag} build fix`);
	chat(a, ["Thanks"]);

	const b = SessionManager.create(OTHER, sessionDir);
	const b1 = chat(b, [`${tag}: write the README`, "Drafted it."]);
	b.branch(b1);
	chat(b, ["Shorter, please", "Cut to half."]);

	const c = SessionManager.create(TRICKY, sessionDir);
	chat(c, [`${tag}: what is in this folder?`, "Three files."]);

	const d = SessionManager.create(ROOT, sessionDir);
	chat(d, [`${tag}: df -h /`, "42% used."]);

	// pi --fork <a> from OTHER: forkFrom copies the whole session into OTHER.
	const f = SessionManager.forkFrom(a.getSessionFile(), OTHER, sessionDir);
	chat(f, [`${tag}: continue in the other project`, "Done there."]);

	// pi /clone at an entry: createBranchedSession on the session opened as pi opens it.
	const opened = SessionManager.open(a.getSessionFile(), sessionDir);
	opened.createBranchedSession(a1);
	chat(opened, [`${tag}: redo from the tests`, "Redone."]);
	return { a, b };
}

if (mixed) {
	write(undefined, "default");
	clock.t += 86400000;
}
write(dir, "flat");

// Not sessions: pi's list skips a file whose first entry is no header, and any non-.jsonl file.
writeFileSync(join(dir, "notes.jsonl"), `${JSON.stringify({ type: "message", id: "x", parentId: null })}\n`);
writeFileSync(join(dir, "README.txt"), "not a session\n");

function listJsonl(d) {
	const res = [];
	for (const name of readdirSync(d)) {
		const p = join(d, name);
		if (statSync(p).isDirectory()) res.push(...listJsonl(p));
		else if (name.endsWith(".jsonl")) res.push(p);
	}
	return res;
}
for (const f of listJsonl(dir).sort()) process.stdout.write(`${f}\n`);
