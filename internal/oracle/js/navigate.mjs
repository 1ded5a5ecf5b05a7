// navigate.mjs (run with Node 22)
//
// Reads a JSON array of requests on stdin and prints a JSON array of
// answers, one per request, each what pi 1.6's own code does:
//
//   {"op":"tree","file":F,"entryId":ID}  /tree's selection of ID without a
//       summary: AgentSession.navigateTree(ID) on SessionManager.open(F).
//       Answers {leafId, context, editorText}: the leaf and
//       buildSessionContext() after, and the text handed to the editor.
//   {"op":"fork","file":F,"entryId":ID}  /fork from the user message ID:
//       AgentSessionRuntime.fork(ID). Answers {entries, labels, context,
//       header, selectedText} of the session it makes.
//   {"op":"open","file":F}  SessionManager.open(F): {leafId, entries,
//       labels, context, header}.
//   {"op":"files","file":F,"oldLeafId":A,"entryId":B}  the files a branch
//       summary of a /tree move from A to B records:
//       collectEntriesForBranchSummary, prepareBranchEntries (no token
//       budget) and computeFileLists. Answers {readFiles, modifiedFiles}.
//
// navigateTree and fork run as pi has them, on an object that stands in
// for the running session: no extension, no model, no UI. Files are never
// touched: each request works on a copy in a temp dir.
//
// An answer that threw is {"error": "..."}.
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { pathToFileURL } from "node:url";
import { coreDir } from "./pi.mjs";

const imp = (p) => import(pathToFileURL(p).href);
const { SessionManager } = await imp(join(coreDir(), "session-manager.js"));
const { AgentSession } = await imp(join(coreDir(), "agent-session.js"));
const { AgentSessionRuntime } = await imp(join(coreDir(), "agent-session-runtime.js"));
const { collectEntriesForBranchSummary, prepareBranchEntries } = await imp(join(coreDir(), "compaction", "branch-summarization.js"));
const { computeFileLists } = await imp(join(coreDir(), "compaction", "utils.js"));

const noExtensions = { hasHandlers: () => false, emit: async () => undefined };

/** What a session manager holds, for comparison. */
function view(sm) {
	const entries = sm.getEntries();
	const labels = {};
	for (const e of entries) {
		const l = sm.getLabel(e.id);
		if (l !== undefined) labels[e.id] = l;
	}
	return { leafId: sm.getLeafId() ?? null, entries, labels, context: sm.buildSessionContext(), header: sm.getHeader() };
}

async function tree(sm, id) {
	const session = {
		isStreaming: false,
		_promptPreflightCount: 0,
		isCompacting: false,
		sessionManager: sm,
		_extensionRunner: noExtensions,
		_refreshFinalizedContext() {},
		_restoreToolsFromTranscript() {},
		_resolveIdleWaitIfIdle() {},
	};
	const r = await AgentSession.prototype.navigateTree.call(session, id, {});
	return { leafId: sm.getLeafId() ?? null, context: sm.buildSessionContext(), editorText: r.editorText ?? null };
}

async function fork(sm, id, dir) {
	let made;
	const runtime = {
		session: { sessionManager: sm, sessionFile: sm.getSessionFile(), extensionRunner: noExtensions },
		cwd: sm.getCwd(),
		services: { agentDir: dir },
		emitBeforeFork: AgentSessionRuntime.prototype.emitBeforeFork,
		teardownCurrent: async () => {},
		apply() {},
		createRuntime: async (options) => {
			made = options.sessionManager;
			return {};
		},
		finishSessionReplacement: async () => {},
	};
	const r = await AgentSessionRuntime.prototype.fork.call(runtime, id);
	return { ...view(made), selectedText: r.selectedText ?? null };
}

const requests = JSON.parse(await new Promise((resolve) => {
	let s = "";
	process.stdin.on("data", (d) => (s += d));
	process.stdin.on("end", () => resolve(s));
}));
const answers = [];
for (const req of requests) {
	const dir = mkdtempSync(join(tmpdir(), "pifs-navigate-"));
	try {
		const copy = join(dir, basename(req.file));
		copyFileSync(req.file, copy);
		const sm = SessionManager.open(copy, dir);
		if (req.op === "tree") answers.push(await tree(sm, req.entryId));
		else if (req.op === "fork") answers.push(await fork(sm, req.entryId, dir));
		else if (req.op === "open") answers.push(view(sm));
		else if (req.op === "files") {
			const { entries } = collectEntriesForBranchSummary(sm, req.oldLeafId, req.entryId);
			answers.push(computeFileLists(prepareBranchEntries(entries).fileOps));
		}
		else answers.push({ error: `unknown op ${req.op}` });
	} catch (e) {
		answers.push({ error: e instanceof Error ? e.message : String(e) });
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}
process.stdout.write(JSON.stringify(answers), () => process.exit(0));
