// corpus.mjs <storeDir>
//
// Writes a corpus of realistic pi sessions with pi's OWN SessionManager
// (@earendil-works/pi-coding-agent 1.6.0) under <storeDir>/<project>/, where
// <project> is pi's default folder name for the session cwd
// (/home/user/proj → --home-user-proj--). Prints the files written, one
// absolute path a line, sorted.
//
// The clock is faked (every `new Date()` / `Date.now()` without arguments
// returns the fake time, then advances it) so timestamps are distinct,
// increasing and reproducible; randomness (entry ids, session ids) is seeded,
// so two runs write byte-identical files.
import crypto from "node:crypto";
import { mkdirSync, readdirSync, statSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const ORACLE_VERSION = "1.6.0";

function oracleDir() {
	if (process.env.PIFS_ORACLE_DIR) return process.env.PIFS_ORACLE_DIR;
	const cache = process.env.XDG_CACHE_HOME || join(homedir(), ".cache");
	return join(cache, "pifs", `oracle-${ORACLE_VERSION}`);
}

if (process.argv.length !== 3) {
	process.stderr.write("usage: corpus.mjs <storeDir>\n");
	process.exit(2);
}
const storeDir = resolve(process.argv[2]);

// ---------------------------------------------------------------------------
// Seeded randomness (mulberry32) for crypto.randomUUID (pi's entry ids) and
// crypto.getRandomValues (pi-ai's uuidv7 session ids).
let seed = 0x5eed1234;
function rand32() {
	seed = (seed + 0x6d2b79f5) | 0;
	let t = seed;
	t = Math.imul(t ^ (t >>> 15), t | 1);
	t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
	return (t ^ (t >>> 14)) >>> 0;
}
function randomBytes(n) {
	const b = new Uint8Array(n);
	for (let i = 0; i < n; i++) b[i] = rand32() & 0xff;
	return b;
}
crypto.randomUUID = () => {
	const b = randomBytes(16);
	b[6] = (b[6] & 0x0f) | 0x40;
	b[8] = (b[8] & 0x3f) | 0x80;
	const h = Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
	return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
};
syncBuiltinESMExports();
globalThis.crypto.getRandomValues = (arr) => {
	const b = randomBytes(arr.byteLength);
	new Uint8Array(arr.buffer, arr.byteOffset, arr.byteLength).set(b);
	return arr;
};

// ---------------------------------------------------------------------------
// Fake clock.
const RealDate = Date;
const clock = {
	t: RealDate.UTC(2025, 4, 12, 9, 0, 0, 0),
	step: 1000,
	/** Current time, then advance by `step` (0 while frozen). */
	read() {
		const v = this.t;
		this.t += this.step;
		return v;
	},
	peek() {
		return this.t;
	},
	advance(ms) {
		this.t += ms;
	},
	/** Run fn with the clock standing still: every entry gets the same timestamp. */
	frozen(fn) {
		const s = this.step;
		this.step = 0;
		try {
			return fn();
		} finally {
			this.step = s;
			this.t += s;
		}
	},
};
class FakeDate extends RealDate {
	constructor(...args) {
		if (args.length === 0) super(clock.read());
		else super(...args);
	}
	static now() {
		return clock.read();
	}
}
globalThis.Date = FakeDate;

const coreDir = join(oracleDir(), "node_modules", "@earendil-works", "pi-coding-agent", "dist", "core");
const { SessionManager } = await import(pathToFileURL(join(coreDir, "session-manager.js")).href);

// ---------------------------------------------------------------------------
// Message builders.
const CWD = "/home/user/proj";
const OTHER_CWD = "/home/user/other";
const projDir = join(storeDir, "--home-user-proj--");
const otherDir = join(storeDir, "--home-user-other--");
mkdirSync(projDir, { recursive: true });

let callSeq = 0;
const MODELS = {
	sonnet: { api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5" },
	gpt: { api: "openai-responses", provider: "openai", model: "gpt-5" },
};

function usage(input, output, cacheRead = 0, cacheWrite = 0) {
	const c = {
		input: input * 3e-6,
		output: output * 15e-6,
		cacheRead: cacheRead * 0.3e-6,
		cacheWrite: cacheWrite * 3.75e-6,
	};
	return {
		input,
		output,
		cacheRead,
		cacheWrite,
		totalTokens: input + output + cacheRead + cacheWrite,
		cost: { ...c, total: c.input + c.output + c.cacheRead + c.cacheWrite },
	};
}

function user(content) {
	return { role: "user", content, timestamp: clock.peek() };
}

function system(content, extra = {}) {
	return { role: "system", content, ...extra, timestamp: clock.peek() };
}

/** blocks: strings are text; {thinking}, {tool, args} objects become thinking / toolCall blocks. */
function assistant(blocks, opts = {}) {
	const m = MODELS[opts.model ?? "sonnet"];
	const content = [];
	let hasTool = false;
	for (const b of blocks) {
		if (typeof b === "string") content.push({ type: "text", text: b });
		else if (b.thinking !== undefined)
			content.push({ type: "thinking", thinking: b.thinking, thinkingSignature: `sig-${callSeq}` });
		else if (b.tool !== undefined) {
			hasTool = true;
			content.push({ type: "toolCall", id: b.id ?? `toolu_${String(++callSeq).padStart(4, "0")}`, name: b.tool, arguments: b.args ?? {} });
		}
	}
	return {
		role: "assistant",
		content,
		api: m.api,
		provider: m.provider,
		model: m.model,
		usage: opts.usage ?? usage(1200, 300, 800, 100),
		stopReason: opts.stopReason ?? (hasTool ? "toolUse" : "stop"),
		timestamp: clock.peek(),
	};
}

function lastToolCallId(msg) {
	const calls = msg.content.filter((c) => c.type === "toolCall");
	return calls[calls.length - 1].id;
}

function toolResult(toolCallId, toolName, text, opts = {}) {
	return {
		role: "toolResult",
		toolCallId,
		toolName,
		content: [{ type: "text", text }],
		...(opts.details !== undefined ? { details: opts.details } : {}),
		...(opts.usage ? { usage: opts.usage } : {}),
		isError: opts.isError ?? false,
		timestamp: clock.peek(),
	};
}

function bash(command, output, exitCode = 0, extra = {}) {
	return { role: "bashExecution", command, output, exitCode, cancelled: false, truncated: false, timestamp: clock.peek(), ...extra };
}

function customRole(customType, content, display = true, details) {
	return { role: "custom", customType, content, display, ...(details !== undefined ? { details } : {}), timestamp: clock.peek() };
}

/** One user → assistant(toolCall) → toolResult → assistant turn. Returns the ids. */
function turn(sm, prompt, tool, args, result, answer, opts = {}) {
	const u = sm.appendMessage(user(prompt));
	const a1msg = assistant([{ thinking: `Plan: ${prompt.slice(0, 40)}` }, `Let me run ${tool}.`, { tool, args }], opts);
	const a1 = sm.appendMessage(a1msg);
	const r = sm.appendMessage(toolResult(lastToolCallId(a1msg), tool, result));
	const a2 = sm.appendMessage(assistant([answer], opts));
	return { u, a1, r, a2 };
}

function newSession(dir = projDir, cwd = CWD) {
	clock.advance(3600_000); // each session starts an hour after the previous one
	return SessionManager.create(cwd, dir);
}

const notes = [];
function note(sm, what) {
	notes.push({ file: sm.getSessionFile(), what });
}

// ---------------------------------------------------------------------------
// 1. every entry type and message role, names set/changed/cleared, labels
//    set/changed/cleared, usage/custom/custom_message entries, null content.
{
	const sm = newSession();
	sm.appendModelChange("anthropic", "claude-sonnet-4-5");
	sm.appendThinkingLevelChange("medium");
	sm.appendMessage(system("You are pi, a coding agent. Be concise.", { sections: { env: "<env>cwd=/home/user/proj</env>" } }));
	const u1 = sm.appendMessage(user("Explain what src/parser.go does."));
	const a1m = assistant(
		[{ thinking: "I should read the file first." }, "I'll read the parser.", { tool: "read", args: { path: "src/parser.go" } }],
		{ usage: usage(2000, 150, 0, 1800) },
	);
	const a1 = sm.appendMessage(a1m);
	sm.appendMessage(
		toolResult(lastToolCallId(a1m), "read", "package parser\n\nfunc Parse(s string) (*AST, error) { ... }\n", {
			details: { lines: 3 },
		}),
	);
	const a2 = sm.appendMessage(assistant(["`Parse` turns a string into an AST; errors are wrapped with positions."], { usage: usage(2300, 90, 1800, 0) }));
	sm.appendSessionInfo("Parser questions");
	sm.appendLabelChange(u1, "question");
	sm.appendMessage(bash("go test ./...", "ok  \tgithub.com/user/proj/src\t0.012s", 0));
	sm.appendMessage(bash("ls /nonexistent", "ls: cannot access '/nonexistent': No such file or directory", 2));
	sm.appendMessage(bash("cat secrets.env", "TOKEN=redacted", 0, { excludeFromContext: true }));
	sm.appendMessage(customRole("reminder", "Remember to run gofmt.", true, { source: "hook" }));
	sm.appendMessage(user([
		{ type: "text", text: "What is in this screenshot?" },
		{ type: "image", data: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==", mimeType: "image/png" },
	]));
	sm.appendMessage(assistant(["A single white pixel."], { model: "gpt" }));
	sm.appendSessionInfo("Parser and screenshot questions");
	sm.appendLabelChange(a2, "answer");
	sm.appendLabelChange(a2, "good answer");
	sm.appendLabelChange(a1, "tool use");
	sm.appendLabelChange(a1, "");
	sm.appendUsage("title", "anthropic", "claude-haiku-4-5", usage(300, 12), "session title generation");
	sm.appendUsage("embedding", "openai", "text-embedding-3-small", usage(500, 0));
	sm.appendCustomEntry("todo-state", { todos: [{ text: "fix parser", done: false }] });
	sm.appendCustomMessageEntry("git-status", "On branch main\nnothing to commit", true, { clean: true });
	sm.appendCustomMessageEntry("hidden-context", [{ type: "text", text: "The user prefers table output." }], false);
	sm.appendModelChange("openai", "gpt-5");
	sm.appendThinkingLevelChange("high");
	sm.appendMessage({ role: "toolResult", toolCallId: "toolu_null", toolName: "read", content: null, isError: true, timestamp: clock.peek() });
	sm.appendMessage({ role: "system", content: null, timestamp: clock.peek() });
	sm.appendMessage(system([{ type: "text", text: "From now on answer in German." }]));
	sm.appendMessage(user("Danke!"));
	sm.appendMessage(assistant(["Bitte!"], { model: "gpt", usage: usage(900, 5, 3000, 0) }));
	sm.appendSessionInfo("");
	note(sm, "every entry type and role; name set, changed, cleared; labels set, changed, cleared; null content on toolResult/system");
}

// ---------------------------------------------------------------------------
// 1b. user/assistant messages with null content (hand-edited / old files do
//     this). pi's context builder copes; its session list (SessionManager.list)
//     drops the whole file (extractTextContent throws on null).
{
	const sm = newSession();
	sm.appendSessionInfo("Null content");
	sm.appendMessage(user("Before the null ones."));
	sm.appendMessage({ role: "user", content: null, timestamp: clock.peek() });
	sm.appendMessage({ ...assistant([], { model: "gpt" }), content: null });
	sm.appendMessage(assistant(["After the null ones."]));
	note(sm, "user and assistant messages with null content (pi's list() skips this file)");
}

// ---------------------------------------------------------------------------
// 2. branches: several levels of forks, branch summaries (non-empty, empty,
//    null target = reset), resetLeaf() second root, identical-timestamp siblings.
{
	const sm = newSession();
	sm.appendSessionInfo("Branchy refactor");
	const t1 = turn(sm, "Rename Foo to Bar everywhere.", "grep", { pattern: "Foo" }, "a.go:3: Foo\nb.go:9: Foo", "Found 2 uses; renamed both.");
	const t2 = turn(sm, "Now add tests.", "write", { path: "bar_test.go" }, "wrote 40 lines", "Added bar_test.go.");
	const t3 = turn(sm, "Run them.", "bash", { command: "go test" }, "FAIL: TestBar", "One test fails; fixing.");
	// fork 1 at t2.a2: alternative test approach
	sm.branch(t2.a2);
	const f1 = turn(sm, "Use table-driven tests instead.", "write", { path: "bar_test.go" }, "wrote 55 lines", "Rewrote as table-driven tests.");
	// fork 1.1 under fork 1 at f1.u (second level)
	sm.branch(f1.u);
	const f11 = sm.appendMessage(assistant(["Actually, let me ask: which package?"]));
	sm.appendMessage(user("Package bar."));
	sm.appendMessage(assistant(["OK, package bar."]));
	// fork 1.1.1 (third level)
	sm.branch(f11);
	sm.appendMessage(user("Never mind, go on."));
	const deep = sm.appendMessage(assistant(["Continuing."]));
	sm.appendLabelChange(deep, "deepest");
	// back to t3 with a branch summary
	sm.branch(t3.a2);
	sm.branchWithSummary(t1.a2, "Tried adding tests; one failed because Bar was unexported.", { readFiles: ["a.go"], modifiedFiles: ["bar_test.go"] }, false, usage(4000, 200));
	sm.appendMessage(user("Export Bar first."));
	sm.appendMessage(assistant(["Exported Bar."]));
	// an empty summary (pi does not add it to the context)
	sm.branchWithSummary(t1.u, "");
	sm.appendMessage(user("Start over from the first answer."));
	sm.appendMessage(assistant(["Sure."]));
	// siblings with identical timestamps (ties keep file order)
	clock.frozen(() => {
		sm.branch(t2.u);
		sm.appendMessage(assistant(["Sibling A (same timestamp as B)."]));
		sm.branch(t2.u);
		sm.appendMessage(assistant(["Sibling B (same timestamp as A)."]));
	});
	// branch summary with a null target: reset to before the first entry (new root)
	sm.branchWithSummary(null, "Abandoned the rename entirely.", undefined, true);
	sm.appendMessage(user("Let's do something else: write a README."));
	sm.appendMessage(assistant(["README written."]));
	// resetLeaf(): another root without a summary
	sm.resetLeaf();
	sm.appendMessage(user("Completely new topic: what's 2+2?"));
	sm.appendMessage(assistant(["4."]));
	note(sm, "forks 3 levels deep, branch summaries (text, empty, null target), resetLeaf root, same-timestamp siblings");
}

// ---------------------------------------------------------------------------
// 3. compactions.
{
	const sm = newSession();
	sm.appendModelChange("anthropic", "claude-sonnet-4-5");
	sm.appendMessage(system("You are pi. Project rules: use tabs."));
	const a = turn(sm, "Read the config loader.", "read", { path: "config.go" }, "package config ...", "It loads TOML.");
	const b = turn(sm, "Add YAML support.", "edit", { path: "config.go" }, "applied 1 edit", "YAML added.");
	// compaction keeping entries from b.u on (systemMessage is recorded)
	sm.appendCompaction("User asked about the config loader; it loads TOML.", b.u, 12000, { readFiles: ["config.go"], modifiedFiles: [] }, false, usage(12000, 400));
	const c = turn(sm, "Now JSON too.", "edit", { path: "config.go" }, "applied 1 edit", "JSON added.");
	// compaction without firstKeptEntryId (undefined → its own id: keeps nothing before it)
	const comp2 = sm.appendCompaction("Config loader supports TOML, YAML, JSON.", undefined, 15000);
	sm.appendMessage(user("Summarize the changes."));
	sm.appendMessage(assistant(["Added YAML and JSON parsing to config.go."]));
	// two compactions in a row, the newer keeps a range that holds the older one
	const d = turn(sm, "Add env overrides.", "edit", { path: "config.go" }, "applied 1 edit", "Env overrides added.");
	const comp3 = sm.appendCompaction("Config: TOML/YAML/JSON, env overrides.", d.u, 18000, undefined, true);
	const comp4 = sm.appendCompaction("Same as before, compacted again.", comp3, 9000);
	sm.appendMessage(user("Anything left?"));
	sm.appendMessage(assistant(["No, all done."]));
	sm.appendLabelChange(comp2, "second compaction");
	// a branch from before the first compaction (its context has no compaction)
	sm.branch(a.a2);
	sm.appendMessage(user("Alternative: drop TOML."));
	sm.appendMessage(assistant(["Dropped TOML."]));
	void c;
	void comp4;
	note(sm, "compactions: kept entry, self (undefined), two in a row, systemMessage; a branch before compaction");
}

// ---------------------------------------------------------------------------
// 4. context edits.
{
	const sm = newSession();
	const u1 = sm.appendMessage(user("Here is my API key: sk-123. Use it to call the API."));
	const a1m = assistant(["Calling with key sk-123.", { tool: "bash", args: { command: "curl -H 'key: sk-123' api" } }]);
	const a1 = sm.appendMessage(a1m);
	const r1 = sm.appendMessage(toolResult(lastToolCallId(a1m), "bash", "{\"ok\":true,\"secret\":\"sk-123\"}"));
	const cm = sm.appendCustomMessageEntry("injected", "Injected note with sk-123", true);
	const cm2 = sm.appendCustomMessageEntry("injected-array", [{ type: "text", text: "Array note sk-123" }], false);
	const a2 = sm.appendMessage(assistant(["The API returned ok."]));
	const fork = a2;
	sm.appendContextEdit(a1, { content: "Calling with key [redacted]." });
	sm.appendContextEdit(u1, { content: [{ type: "text", text: "Here is my API key: [redacted]." }] });
	sm.appendContextEdit(r1, null);
	sm.appendContextEdit(cm, { content: "Injected note [redacted]" });
	sm.appendContextEdit(cm2, { content: [{ type: "text", text: "Array note [redacted]" }] });
	// a second edit of the same target: the later one wins
	sm.appendContextEdit(a1, { content: [{ type: "text", text: "Calling the API (key removed)." }] });
	sm.appendMessage(user("Thanks, what next?"));
	sm.appendMessage(assistant(["Nothing."]));
	// on another branch the edits do not apply
	sm.branch(fork);
	sm.appendMessage(user("On this branch nothing was redacted."));
	sm.appendMessage(assistant(["Right."]));
	note(sm, "context_edit: string on assistant, array on user, null on toolResult, custom_message edits, repeated edit, unedited branch");
}

// ---------------------------------------------------------------------------
// 5. clones (createBranchedSession) at labelled paths.
{
	const sm = newSession();
	sm.appendSessionInfo("Clone source");
	const t1 = turn(sm, "Set up CI.", "write", { path: ".ci/run" }, "wrote", "CI set up.");
	sm.appendLabelChange(t1.u, "ci start");
	// entries after this label are children of the label entry (label mid-path)
	const t2 = turn(sm, "Add lint step.", "edit", { path: ".ci/run" }, "applied", "Lint added.");
	sm.appendLabelChange(t2.a2, "lint done");
	sm.appendLabelChange(t2.a2, "lint step done");
	const t3 = turn(sm, "Add coverage.", "edit", { path: ".ci/run" }, "applied", "Coverage added.");
	sm.branch(t2.a2);
	const alt = turn(sm, "Add race detector instead.", "edit", { path: ".ci/run" }, "applied", "Race detector on.");
	sm.appendLabelChange(alt.a2, "race");
	// compaction on the path, its firstKeptEntryId points at... a kept message
	sm.appendCompaction("CI with lint and race detector.", alt.u, 8000);
	sm.appendMessage(user("Done?"));
	const last = sm.appendMessage(assistant(["Done."]));
	const srcFile = sm.getSessionFile();
	note(sm, "clone source: labels (one mid-path), two branches, compaction");

	// clone 1: the path ending at the main line (t3), from a separate manager
	const sm1 = SessionManager.open(srcFile, projDir);
	clock.advance(60_000);
	sm1.createBranchedSession(t3.a2);
	sm1.appendMessage(user("Continuing in the clone."));
	sm1.appendMessage(assistant(["Cloned session continues."]));
	note(sm1, "clone (createBranchedSession) of the t3 path; labels re-emitted; appended after");

	// clone 2: the race branch with a compaction and a label in the middle
	clock.advance(60_000);
	sm.createBranchedSession(last);
	note(sm, "clone of the race branch: label mid-path re-chained, compaction firstKeptEntryId kept");
}

// ---------------------------------------------------------------------------
// 6. fork into another project (SessionManager.forkFrom).
{
	const sm = newSession();
	sm.appendSessionInfo("Fork me");
	const t1 = turn(sm, "Write a CLI flag parser.", "write", { path: "flags.go" }, "wrote", "Parser written.");
	sm.appendLabelChange(t1.a2, "parser");
	turn(sm, "Add --verbose.", "edit", { path: "flags.go" }, "applied", "--verbose added.");
	note(sm, "fork source");
	clock.advance(60_000);
	const fork = SessionManager.forkFrom(sm.getSessionFile(), OTHER_CWD, otherDir);
	fork.appendMessage(user("In the other project now; add --quiet."));
	fork.appendMessage(assistant(["--quiet added."]));
	note(fork, "fork (forkFrom) into /home/user/other, appended after");
}

// ---------------------------------------------------------------------------
// 7. only a header and non-conversation entries: pi never writes this file.
{
	const sm = newSession();
	sm.appendModelChange("anthropic", "claude-sonnet-4-5");
	sm.appendThinkingLevelChange("low");
	sm.appendCustomEntry("setup", { ok: true });
	// not flushed: no user/assistant message
}

// ---------------------------------------------------------------------------
// 8. long linear session (~300 entries).
{
	const sm = newSession();
	sm.appendSessionInfo("Long session");
	sm.appendMessage(system("You are pi."));
	let firstOfLastTurns;
	for (let i = 0; i < 74; i++) {
		const t = turn(
			sm,
			`Step ${i}: fix lint warning #${i}.`,
			i % 3 === 0 ? "read" : "edit",
			{ path: `pkg/file${i % 7}.go` },
			`result ${i}`,
			`Fixed warning #${i}.`,
			{ model: i % 5 === 0 ? "gpt" : "sonnet", usage: usage(1000 + i * 50, 100 + i, i * 40, i % 4 === 0 ? 200 : 0) },
		);
		if (i === 60) firstOfLastTurns = t.u;
		if (i === 62) sm.appendCompaction(`Fixed warnings 0..61.`, firstOfLastTurns, 90000 + i);
		if (i % 25 === 24) sm.appendLabelChange(t.a2, `milestone ${i + 1}`);
	}
	note(sm, "long linear session (~300 entries) with one compaction");
}

// ---------------------------------------------------------------------------
// 9. the leaf is moved with branch() before the final append.
{
	const sm = newSession();
	const t1 = turn(sm, "Draft the changelog.", "write", { path: "CHANGELOG.md" }, "wrote", "Drafted.");
	turn(sm, "Add the 1.2 section.", "edit", { path: "CHANGELOG.md" }, "applied", "1.2 added.");
	sm.appendMessage(user("And 1.3?"));
	sm.appendMessage(assistant(["1.3 added."]));
	sm.branch(t1.a2);
	sm.appendMessage(user("Actually, redo from the draft."));
	note(sm, "leaf moved with branch() before the final append (last entry is a child of an early entry)");
}

// ---------------------------------------------------------------------------
function listJsonl(dir) {
	const res = [];
	for (const name of readdirSync(dir)) {
		const p = join(dir, name);
		if (statSync(p).isDirectory()) res.push(...listJsonl(p));
		else if (name.endsWith(".jsonl")) res.push(p);
	}
	return res;
}
const files = listJsonl(storeDir).sort();
for (const f of files) process.stdout.write(`${f}\n`);
if (process.env.PIFS_CORPUS_NOTES) {
	for (const n of notes) process.stderr.write(`${n.file}\t${n.what}\n`);
}
