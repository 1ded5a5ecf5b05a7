// commands.mjs <session.jsonl>... (run with Node 22)
//
// Prints ONE JSON object on stdout: for each session file, what pi 1.6's
// own code gives for its /session and /copy commands:
//
//   { "<file>": { "error": null | "...",
//                 "stats": AgentSession.getSessionStats() (its counts,
//                          tokens and cost) | null,
//                 "statsError": null | "...",
//                 "cached": the "(N%)" pi's /session prints beside
//                           "Cached:", without "%" | null when it prints none,
//                 "rate": pi's expression for it, cacheRead / (input +
//                         cacheRead + cacheWrite) * 100, on the stats' tokens
//                         | null,
//                 "copy": { "<id>" | "@leaf": the text /copy copies with that
//                           entry as leaf (getLastAssistantText over the
//                           messages pi resumes with) | null when it copies
//                           nothing },
//                 "copyErrors": { "<id>": "..." } } }
//
// getSessionStats, /session (InteractiveMode.handleSessionCommand) and
// getLastAssistantText run as pi has them, on objects that stand in for the
// running session: no model, no extension, cache warming off. The files are
// never touched: each is copied into a temp dir and the copy opened.
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { pathToFileURL } from "node:url";
import { coreDir, distDir } from "./pi.mjs";

const imp = (p) => import(pathToFileURL(p).href);
const { SessionManager, buildSessionContext } = await imp(join(coreDir(), "session-manager.js"));
const { AgentSession } = await imp(join(coreDir(), "agent-session.js"));
const themeMod = await imp(join(distDir(), "modes", "interactive", "theme", "theme.js"));
const { InteractiveMode } = await imp(join(distDir(), "modes", "interactive", "interactive-mode.js"));
themeMod.initTheme();

function message(e) {
	return e instanceof Error ? e.message : String(e);
}

/** Does the walk up from id by parentId (buildSessionContext's) loop? */
function loops(byId, id) {
	const seen = new Set();
	for (let e = byId.get(id); e; e = e.parentId ? byId.get(e.parentId) : undefined) {
		if (seen.has(e)) return true;
		seen.add(e);
	}
	return false;
}

/** The text of pi's /session for stats, ANSI codes dropped. */
function sessionText(sm, stats) {
	const shown = [];
	const fake = {
		session: {
			getSessionStats: () => stats,
			modelRuntime: { getModel: () => undefined, getAvailableSnapshot: () => [] },
			cacheWarmingStatus: undefined,
			model: undefined,
		},
		sessionManager: sm,
		settingsManager: { getCacheWarmingMode: () => "off" },
		chatContainer: { addChild: (c) => shown.push(c) },
		ui: { requestRender() {} },
	};
	InteractiveMode.prototype.handleSessionCommand.call(fake);
	return shown
		.filter((c) => typeof c.render === "function")
		.map((c) => c.render(1 << 16).join("\n"))
		.join("\n")
		.replace(/\x1b\[[0-9;]*m/g, "");
}

const result = {};
for (const src of process.argv.slice(2)) {
	const r = { error: null, stats: null, statsError: null, cached: null, rate: null, copy: {}, copyErrors: {} };
	result[src] = r;
	const dir = mkdtempSync(join(tmpdir(), "pifs-commands-"));
	try {
		const copy = join(dir, basename(src));
		copyFileSync(src, copy);
		const sm = SessionManager.open(copy, dir);
		try {
			const stats = AgentSession.prototype.getSessionStats.call({ sessionManager: sm, getContextUsage: () => undefined });
			r.stats = { userMessages: stats.userMessages, assistantMessages: stats.assistantMessages, toolCalls: stats.toolCalls,
				toolResults: stats.toolResults, totalMessages: stats.totalMessages, tokens: stats.tokens, cost: stats.cost };
			const m = /Cached: [0-9,]+ \(([^)]*)%\)/.exec(sessionText(sm, stats));
			r.cached = m ? m[1] : null;
			const { input, cacheRead, cacheWrite } = stats.tokens;
			const promptTokens = input + cacheRead + cacheWrite;
			if (promptTokens > 0 && (cacheRead > 0 || cacheWrite > 0)) r.rate = (cacheRead / promptTokens) * 100;
		} catch (e) {
			r.statsError = message(e);
		}
		const entries = sm.getEntries();
		const byId = new Map(entries.map((e) => [e.id, e]));
		const leaves = [["@leaf", sm.getLeafId()]];
		for (const e of entries) if (typeof e.id === "string") leaves.push([e.id, e.id]);
		for (const [key, id] of leaves) {
			if (id && loops(byId, id)) {
				r.copyErrors[key] = "the walk up loops";
				continue;
			}
			try {
				// pi resumes with buildSessionContext() at its leaf.
				const ctx = key === "@leaf" ? sm.buildSessionContext() : buildSessionContext(entries, id, byId);
				const messages = ctx.messages;
				r.copy[key] = AgentSession.prototype.getLastAssistantText.call({ messages }) ?? null;
			} catch (e) {
				r.copyErrors[key] = message(e);
			}
		}
	} catch (e) {
		r.error = message(e);
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}
process.stdout.write(JSON.stringify(result), () => process.exit(0));
