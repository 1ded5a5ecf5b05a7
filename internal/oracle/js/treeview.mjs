// treeview.mjs [--tips] [--times=MS,MS…] <session.jsonl>... (run with Node 22)
//
// Prints ONE JSON object on stdout: for each session file, what pi 1.6's own
// /tree selector (TreeSelectorComponent in
// dist/modes/interactive/components/tree-selector.js) lists in each of its
// five filter modes, and what its /fork offers
// (AgentSession.getUserMessagesForForking). The oracle for pifs's tree*.txt
// and prompts.txt.
//
//   { "<file>": { "error": null | "...",
//                 "leafId": pi's getLeafId(),
//                 "ids": the ids of getEntries(), in file order,
//                 "views": [ { "leaf": ID, "mode": MODE, "error": null | "...",
//                              "rows": [ { "id", "text", "line" } ],
//                              "empty": the line drawn for no rows | null,
//                              "times": { "<MS>": [ line ] } } ],
//                 "prompts": [ { "entryId", "text" } ] | null,
//                 "promptsError": null | "..." } }
//
// The active leaf is pi's (getLeafId()); with --tips also every tip of the
// tree in turn, as pifs shows it in branches/<tip>/. A row's "text" is
// getEntryDisplayText; its "line" is the row as the selector's render()
// draws it (fold marks included), without the two columns of the cursor
// gutter; "empty" is the first line render() draws when the filter lists
// nothing, likewise. With --times, "times" holds, for each time given (ms
// since the epoch, as "now"), the lines render() draws with the label
// timestamps shown (the T key), in the local zone of $TZ. pi's code runs
// as is, with two changes that a file needs and the TUI does not: the
// theme draws no colours (its fg/bg/bold/italic return the text), and the
// terminal is tall and wide enough for every row in full. Paths of tool
// calls are shortened against $HOME, as pi's are.
//
// The files are never touched: each is copied into a temp dir and the copy
// opened, as dump.mjs does.
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { pathToFileURL } from "node:url";
import { coreDir, distDir } from "./pi.mjs";

const imp = (p) => import(pathToFileURL(p).href);
const { SessionManager } = await imp(join(coreDir(), "session-manager.js"));
const { AgentSession } = await imp(join(coreDir(), "agent-session.js"));
const themeMod = await imp(join(distDir(), "modes", "interactive", "theme", "theme.js"));
const { TreeSelectorComponent } = await imp(join(distDir(), "modes", "interactive", "components", "tree-selector.js"));

themeMod.initTheme();
const theme = globalThis[Symbol.for("@earendil-works/pi-coding-agent:theme")];
theme.fg = (_color, text) => text;
theme.bg = (_color, text) => text;
theme.bold = (text) => text;
theme.italic = (text) => text;

const MODES = ["default", "no-tools", "user-only", "labeled-only", "all"];
const WIDTH = 1 << 30;

const args = process.argv.slice(2);
const tips = args.includes("--tips");
const timesArg = args.find((a) => a.startsWith("--times="));
const nows = timesArg ? timesArg.slice("--times=".length).split(",").map(Number) : [];
const files = args.filter((a) => a !== "--tips" && a !== timesArg);

// "Now", for formatLabelTimestamp's new Date(): a Date whose argument-less
// construction gives the time asked for.
const RealDate = globalThis.Date;
let fixedNow = null;
class FixedDate extends RealDate {
	constructor(...a) {
		if (a.length === 0 && fixedNow !== null) super(fixedNow);
		else super(...a);
	}
	static now() {
		return fixedNow ?? RealDate.now();
	}
}
globalThis.Date = FixedDate;

function message(e) {
	return e instanceof Error ? e.message : String(e);
}

/** The ids of the childless nodes of getTree(), depth first. */
function tipIds(roots) {
	const out = [];
	const stack = [...roots].reverse();
	const seen = new Set();
	while (stack.length > 0) {
		const n = stack.pop();
		if (seen.has(n)) continue; // pi lists a duplicated id's node twice
		seen.add(n);
		if (n.children.length === 0) out.push(n.entry.id);
		for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]);
	}
	return out;
}

/**
 * Why pi's tree or selector would not be comparable on these entries, or
 * null: getTree() loops when an entry is its own descendant (a duplicated
 * id, or id-less entries, which pi files under one key, can make one) and
 * lists a node twice under a duplicated id; the selector's ancestor walk
 * loops through an entry that is its own parent.
 */
function hangs(entries) {
	const nodes = new Map();
	for (const e of entries) nodes.set(e.id, { e, children: [] });
	const roots = [];
	for (const e of entries) {
		const n = nodes.get(e.id);
		const p = e.parentId === null || e.parentId === e.id ? undefined : nodes.get(e.parentId);
		if (p) p.children.push(n);
		else roots.push(n);
	}
	const seen = new Set();
	const stack = [...roots];
	while (stack.length > 0) {
		const n = stack.pop();
		if (seen.has(n)) return `getTree() reaches entry ${n.e.id} twice`;
		seen.add(n);
		stack.push(...n.children);
	}
	for (const e of entries) {
		if (e.parentId === e.id && entries.some((c) => c !== e && c.parentId === e.id)) return `entry ${e.id} is its own parent and has children`;
	}
	return null;
}

/** Does the walk up from leaf by parentId (the selector's) loop? */
function chainLoops(sm, leaf) {
	const seen = new Set();
	for (let id = leaf; id; id = sm.getEntry(id)?.parentId) {
		if (seen.has(id)) return true;
		seen.add(id);
	}
	return false;
}

function view(tree, leaf, mode) {
	const out = { leaf, mode, error: null, rows: [], empty: null, times: {} };
	let list;
	try {
		const sel = new TreeSelectorComponent(tree, leaf, 1 << 30, () => {}, () => {}, undefined, undefined, mode);
		list = sel.getTreeList();
		list.maxVisibleLines = list.filteredNodes.length + 10;
	} catch (e) {
		out.error = message(e);
		return out;
	}
	for (const fn of list.filteredNodes) {
		let text = null;
		try {
			text = list.getEntryDisplayText(fn.node, false);
		} catch (e) {
			out.error ??= `row ${fn.node.entry.id}: ${message(e)}`;
		}
		out.rows.push({ id: fn.node.entry.id, text, line: null });
	}
	try {
		const lines = list.render(WIDTH);
		if (list.filteredNodes.length === 0) out.empty = lines[0].slice(2);
		for (let i = 0; i < out.rows.length; i++) out.rows[i].line = lines[i].slice(2);
	} catch (e) {
		out.error ??= `render: ${message(e)}`;
	}
	for (const now of nows) {
		try {
			fixedNow = now;
			list.showLabelTimestamps = true;
			const lines = list.render(WIDTH);
			out.times[now] = lines.slice(0, Math.max(1, out.rows.length)).map((l) => l.slice(2));
		} catch (e) {
			out.error ??= `render with times: ${message(e)}`;
		} finally {
			fixedNow = null;
			list.showLabelTimestamps = false;
		}
	}
	return out;
}

const result = {};
for (const src of files) {
	const r = { error: null, leafId: null, ids: [], views: [], prompts: null, promptsError: null };
	result[src] = r;
	const dir = mkdtempSync(join(tmpdir(), "pifs-treeview-"));
	try {
		const copy = join(dir, basename(src));
		copyFileSync(src, copy);
		const sm = SessionManager.open(copy, dir);
		r.leafId = sm.getLeafId() ?? null;
		r.ids = sm.getEntries().map((e) => e.id ?? null);
		const hang = hangs(sm.getEntries());
		if (hang) {
			r.error = hang;
			continue;
		}
		try {
			r.prompts = AgentSession.prototype.getUserMessagesForForking.call({ sessionManager: sm });
		} catch (e) {
			r.promptsError = message(e);
		}
		const tree = sm.getTree();
		const leaves = [r.leafId];
		if (tips) for (const id of tipIds(tree)) if (!leaves.includes(id)) leaves.push(id);
		for (const leaf of leaves) {
			for (const mode of MODES) {
				if (chainLoops(sm, leaf)) r.views.push({ leaf, mode, error: "the walk up from the leaf loops", rows: [] });
				else r.views.push(view(tree, leaf, mode));
			}
		}
	} catch (e) {
		r.error = message(e);
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}
process.stdout.write(JSON.stringify(result), () => process.exit(0));
