// resume.mjs <agent-dir> <session.jsonl>... (run with Node 22)
//
// Prints ONE JSON object on stdout: for each session file, the model and
// thinking level pi 1.6 resumes it with (createAgentSession on
// SessionManager.open of a copy, as `pi --session FILE` does, with the
// models.json and settings of <agent-dir>, no extensions), and what the
// session records of them:
//
//   { "<file>": { "error": null | "...",
//                 "model": "provider/id" | null,
//                 "thinkingLevel": "...",
//                 "fallback": pi's modelFallbackMessage | null,
//                 "selection": getBranchSelection(getBranch()) as
//                              "provider/id" (no catalog: no virtual
//                              models) | null,
//                 "hasMessages": the context at the leaf has a message,
//                 "recordedLevel": buildSessionContext().thinkingLevel when
//                                  the branch has a thinking_level_change,
//                                  else null,
//                 "appended": the lines resuming appended to the copy } }
//
// The files are never touched: each is copied into a temp dir.
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { pathToFileURL } from "node:url";
import { coreDir } from "./pi.mjs";

const imp = (p) => import(pathToFileURL(p).href);
const { SessionManager } = await imp(join(coreDir(), "session-manager.js"));
const { createAgentSession } = await imp(join(coreDir(), "sdk.js"));
const { getBranchSelection } = await imp(join(coreDir(), "virtual-models.js"));

function message(e) {
	return e instanceof Error ? e.message : String(e);
}

const [agentDir, ...files] = process.argv.slice(2);
const result = {};
for (const src of files) {
	const r = { error: null, model: null, thinkingLevel: null, fallback: null, selection: null, hasMessages: false, recordedLevel: null, appended: [] };
	result[src] = r;
	const dir = mkdtempSync(join(tmpdir(), "pifs-resume-"));
	try {
		const copy = join(dir, basename(src));
		copyFileSync(src, copy);
		const before = readFileSync(copy, "utf8");
		const sm = SessionManager.open(copy, dir);
		const branch = sm.getBranch();
		const sel = getBranchSelection(branch, () => undefined);
		r.selection = sel ? `${sel.provider}/${sel.modelId}` : null;
		const ctx = sm.buildSessionContext();
		r.hasMessages = ctx.messages.length > 0;
		if (branch.some((e) => e.type === "thinking_level_change")) r.recordedLevel = ctx.thinkingLevel;
		const { session, modelFallbackMessage } = await createAgentSession({ agentDir, sessionManager: sm, cwd: dir });
		r.model = session.model ? `${session.model.provider}/${session.model.id}` : null;
		r.thinkingLevel = session.thinkingLevel;
		r.fallback = modelFallbackMessage ?? null;
		r.appended = readFileSync(copy, "utf8").slice(before.length).split("\n").filter(Boolean);
		session.dispose?.();
	} catch (e) {
		r.error = message(e);
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}
process.stdout.write(JSON.stringify(result), () => process.exit(0));
