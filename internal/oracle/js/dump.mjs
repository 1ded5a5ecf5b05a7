// dump.mjs <session.jsonl> [--all-contexts]
//
// Prints ONE JSON object on stdout: pi's own view (@earendil-works/pi-coding-agent
// 1.6.0, SessionManager) of a session file. Used as the test oracle for pifs.
//
// The given file is never touched: pi appends "\n" to a file without a final
// newline and rewrites v1/v2 files when it migrates them, so the file is copied
// (same basename, same mtime) into a fresh temp dir and the copy is opened.
//
// pi has no guard against parent cycles: getBranch()/buildSessionContext() loop
// forever on one, and getTree() does too when a duplicated id makes a node its
// own descendant. Those calls are skipped (reported in "errors") when the
// structure would make them loop.
import { copyFileSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { basename, join } from "node:path";
import { pathToFileURL } from "node:url";

const ORACLE_VERSION = "1.6.0";

function oracleDir() {
	if (process.env.PIFS_ORACLE_DIR) return process.env.PIFS_ORACLE_DIR;
	const cache = process.env.XDG_CACHE_HOME || join(homedir(), ".cache");
	return join(cache, "pifs", `oracle-${ORACLE_VERSION}`);
}

const coreDir = join(oracleDir(), "node_modules", "@earendil-works", "pi-coding-agent", "dist", "core");
const { SessionManager, buildSessionContext } = await import(pathToFileURL(join(coreDir, "session-manager.js")).href);
const { createUsageTotals, addUsageToTotals } = await import(pathToFileURL(join(coreDir, "usage-totals.js")).href);

const args = process.argv.slice(2);
const allContexts = args.includes("--all-contexts");
const files = args.filter((a) => a !== "--all-contexts");
if (files.length !== 1) {
	process.stderr.write("usage: dump.mjs <session.jsonl> [--all-contexts]\n");
	process.exit(2);
}
const srcPath = files[0];

const out = {
	valid: false,
	empty: false,
	error: null,
	header: null,
	entries: null,
	leafId: null,
	name: null,
	labels: null,
	roots: null,
	children: null,
	tips: null,
	paths: null,
	contexts: null,
	contextAtLeaf: null,
	contextNull: null,
	info: null,
	infoAll: null,
	usage: null,
	usageError: null,
	stats: null,
	errors: Object.create(null),
};

function errMessage(e) {
	if (e instanceof Error) return e.message;
	return String(e);
}

/** Run fn, store its result in out[field]; on a throw record the message in errors[field]. */
async function field(name, fn) {
	try {
		out[name] = await fn();
	} catch (e) {
		out.errors[name] = errMessage(e);
	}
}

function isoOrNull(d) {
	if (!(d instanceof Date)) return null;
	return Number.isNaN(d.getTime()) ? null : d.toISOString();
}

function infoView(info) {
	if (!info) return null;
	return {
		id: info.id ?? null,
		cwd: info.cwd,
		name: info.name ?? null,
		parentSessionPath: info.parentSessionPath ?? null,
		created: isoOrNull(info.created),
		modified: isoOrNull(info.modified),
		messageCount: info.messageCount,
		firstMessage: info.firstMessage,
	};
}

/**
 * Would walking parent links from `start` (as getBranch / buildSessionPath do:
 * `current = current.parentId ? index.get(current.parentId) : undefined`) loop?
 */
function parentChainLoops(start, index) {
	const seen = new Set();
	let current = start;
	while (current) {
		if (seen.has(current)) return true;
		seen.add(current);
		current = current.parentId ? index.get(current.parentId) : undefined;
	}
	return false;
}

/** The start entry of buildSessionPath(entries, leafId, index) (leafId !== null). */
function sessionPathStart(entries, leafId, index) {
	let leaf;
	if (leafId) leaf = index.get(leafId);
	leaf ??= entries[entries.length - 1];
	return leaf;
}

/**
 * Mirror of the node linking in SessionManager.getTree(); reports whether a
 * node is reachable from itself (then pi's sort loop never ends).
 */
function treeLoops(entries) {
	const nodeMap = new Map();
	const roots = [];
	for (const entry of entries) nodeMap.set(entry.id, { children: [] });
	for (const entry of entries) {
		const node = nodeMap.get(entry.id);
		if (entry.parentId === null || entry.parentId === entry.id) {
			roots.push(node);
		} else {
			const parent = nodeMap.get(entry.parentId);
			if (parent) parent.children.push(node);
			else roots.push(node);
		}
	}
	// Iterative DFS with colours: 1 = on the current path, 2 = done.
	const colour = new Map();
	for (const root of roots) {
		if (colour.get(root) === 2) continue;
		const stack = [[root, 0]];
		colour.set(root, 1);
		while (stack.length > 0) {
			const top = stack[stack.length - 1];
			const [node, i] = top;
			if (i >= node.children.length) {
				colour.set(node, 2);
				stack.pop();
				continue;
			}
			top[1] = i + 1;
			const child = node.children[i];
			const c = colour.get(child);
			if (c === 1) return true;
			if (c === 2) continue;
			colour.set(child, 1);
			stack.push([child, 0]);
		}
	}
	return false;
}

const tempDir = mkdtempSync(join(tmpdir(), "pifs-dump-"));
try {
	const copyPath = join(tempDir, basename(srcPath));
	try {
		copyFileSync(srcPath, copyPath);
		const st = statSync(srcPath);
		utimesSync(copyPath, st.atime, st.mtime);
	} catch (e) {
		out.error = errMessage(e);
		throw e;
	}
	const wasEmpty = statSync(copyPath).size === 0;

	// pi's session list (/resume) reads the file as it is on disk, before any
	// open() repaired or migrated it, so list first.
	let cwd;
	try {
		const first = readFileSync(copyPath, "utf8")
			.split("\n")
			.map((l) => {
				try {
					return l.trim() ? JSON.parse(l) : undefined;
				} catch {
					return undefined;
				}
			})
			.find((e) => e); // like pi, skip blank, malformed and falsy lines
		cwd = first?.cwd;
	} catch {
		cwd = undefined;
	}
	await field("info", async () => {
		// list(cwd, dir) keeps only sessions whose header cwd matches cwd; a
		// header without a string cwd never matches (and list(undefined) throws).
		if (typeof cwd !== "string") return null;
		const list = await SessionManager.list(cwd, tempDir);
		return infoView(list.find((i) => i.path === copyPath));
	});
	await field("infoAll", async () => {
		// listAll(dir) does not filter on cwd.
		const list = await SessionManager.listAll(tempDir);
		return infoView(list.find((i) => i.path === copyPath));
	});

	let sm;
	try {
		sm = SessionManager.open(copyPath);
	} catch (e) {
		out.error = errMessage(e);
	}

	if (sm) {
		out.empty = wasEmpty;
		await field("header", () => sm.getHeader());
		out.valid = !wasEmpty && out.header != null;
		await field("entries", () => sm.getEntries());
		await field("leafId", () => sm.getLeafId() ?? null);
		await field("name", () => sm.getSessionName() ?? null);

		const entries = sm.getEntries();
		// Exactly SessionManager._buildIndex's byId.
		const byId = new Map();
		for (const entry of sm.fileEntries ?? entries) {
			if (entry.type === "session") continue;
			byId.set(entry.id, entry);
		}
		const stringIds = [...byId.keys()].filter((id) => typeof id === "string");

		await field("labels", () => {
			const labels = Object.create(null);
			for (const entry of entries) {
				if (typeof entry.id !== "string") continue;
				const label = sm.getLabel(entry.id);
				if (label !== undefined) labels[entry.id] = label;
			}
			return labels;
		});

		try {
			if (treeLoops(entries)) throw new Error("getTree would loop forever: a node is its own descendant (duplicate ids)");
			const roots = sm.getTree();
			const uniq = (nodes) => {
				const seen = new Set();
				const res = [];
				for (const n of nodes) {
					if (seen.has(n)) continue;
					seen.add(n);
					res.push(n);
				}
				return res;
			};
			out.roots = uniq(roots).map((n) => n.entry.id);
			const children = Object.create(null);
			const tips = [];
			const tipSeen = new Set();
			const stack = uniq(roots).reverse();
			const expanded = new Set();
			while (stack.length > 0) {
				const node = stack.pop();
				const kids = uniq(node.children);
				if (kids.length === 0) {
					if (!tipSeen.has(node)) {
						tipSeen.add(node);
						tips.push(node.entry.id);
					}
					continue;
				}
				if (expanded.has(node)) continue;
				expanded.add(node);
				const key = String(node.entry.id);
				if (!(key in children)) children[key] = kids.map((k) => k.entry.id);
				for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]);
			}
			out.children = children;
			out.tips = tips;
		} catch (e) {
			out.errors.tree = errMessage(e);
		}

		await field("paths", () => {
			const paths = Object.create(null);
			for (const id of stringIds) {
				try {
					if (id && parentChainLoops(byId.get(id), byId)) throw new Error("getBranch would loop forever: parent cycle");
					paths[id] = sm.getBranch(id).map((e) => e.id);
				} catch (e) {
					out.errors[`paths/${id}`] = errMessage(e);
				}
			}
			return paths;
		});

		const context = (leafId) => {
			if (leafId !== null && parentChainLoops(sessionPathStart(entries, leafId, byId), byId)) {
				throw new Error("buildSessionContext would loop forever: parent cycle");
			}
			return buildSessionContext(entries, leafId, byId);
		};
		await field("contexts", () => {
			let ids;
			if (allContexts) {
				ids = stringIds;
			} else {
				ids = (out.tips ?? []).filter((id) => typeof id === "string");
				const leaf = sm.getLeafId();
				if (typeof leaf === "string" && !ids.includes(leaf)) ids.push(leaf);
			}
			const contexts = Object.create(null);
			for (const id of ids) {
				try {
					contexts[id] = context(id);
				} catch (e) {
					out.errors[`contexts/${id}`] = errMessage(e);
				}
			}
			return contexts;
		});
		await field("contextAtLeaf", () => {
			const leaf = sm.getLeafId();
			if (leaf !== null && parentChainLoops(sessionPathStart(entries, leaf, byId), byId)) {
				throw new Error("buildSessionContext would loop forever: parent cycle");
			}
			return sm.buildSessionContext();
		});
		await field("contextNull", () => buildSessionContext(entries, null, byId));

		// AgentSession.getSessionStats(), token/cost part, verbatim.
		try {
			const usageTotals = createUsageTotals();
			for (const entry of sm.getEntries()) {
				if (entry.type === "usage") {
					addUsageToTotals(usageTotals, entry.usage);
				} else if ((entry.type === "branch_summary" || entry.type === "compaction") && entry.usage) {
					addUsageToTotals(usageTotals, entry.usage);
				}
				if (entry.type !== "message") continue;
				const message = entry.message;
				if (message.role === "toolResult") {
					if (message.usage) addUsageToTotals(usageTotals, message.usage);
				} else if (message.role === "assistant") {
					addUsageToTotals(usageTotals, message.usage);
				}
			}
			out.usage = {
				input: usageTotals.input,
				output: usageTotals.output,
				cacheRead: usageTotals.cacheRead,
				cacheWrite: usageTotals.cacheWrite,
				total: usageTotals.input + usageTotals.output + usageTotals.cacheRead + usageTotals.cacheWrite,
				cost: usageTotals.cost,
			};
		} catch (e) {
			out.usage = null;
			out.usageError = errMessage(e);
		}
		// AgentSession.getSessionStats(), message counters, verbatim.
		await field("stats", () => {
			let userMessages = 0;
			let assistantMessages = 0;
			let toolResults = 0;
			let totalMessages = 0;
			let toolCalls = 0;
			for (const entry of sm.getEntries()) {
				if (entry.type !== "message") continue;
				totalMessages++;
				const message = entry.message;
				if (message.role === "user") {
					userMessages++;
				} else if (message.role === "toolResult") {
					toolResults++;
				} else if (message.role === "assistant") {
					assistantMessages++;
					if (Array.isArray(message.content)) {
						toolCalls += message.content.filter((c) => c.type === "toolCall").length;
					}
				}
			}
			return { userMessages, assistantMessages, toolCalls, toolResults, totalMessages };
		});
	}
} catch {
	// out.error is set
} finally {
	rmSync(tempDir, { recursive: true, force: true });
}

// Top-level fields always print (undefined → null); inside values JSON.stringify's
// own rules apply (undefined in arrays → null, undefined properties dropped).
const text = JSON.stringify(out, function (key, value) {
	if (this === out && value === undefined) return null;
	return value;
});
process.stdout.write(`${text}\n`);
