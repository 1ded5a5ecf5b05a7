// searchtext.mjs <store-dir>
//
// Prints one JSON object per line for every entry (with a string id) of
// every session file of a store (the .jsonl files at its top and one
// folder down): the text pifs's search index must hold for it, taken the
// way pi (@earendil-works/pi-coding-agent 1.6.0) takes it, after pi's own
// SessionManager has read (and migrated) the file:
//
//   {file, id, type, role, time, text, cut, tools, model, label, name}
//
// Where pi's code extracts the text, its functions are used: pi-ai's
// contentText (the text of a message's content: a string, or the text
// blocks joined by newlines; what pi's session list, its compaction and
// its /copy take) for user and assistant text, tool results, custom and
// hidden messages; SessionManager's getLabel and getSessionName for the
// labels and the session's name. Where pi has no function for a part the
// index holds (thinking blocks, tool calls' names and arguments, a bash
// execution's command and output, custom entries' data, summaries), this
// script takes it from pi's entry by the rule pifs states (search.Extract):
// thinking as written, a tool call's name then the leaves of its
// arguments in JavaScript's own Object.values order (strings as
// themselves, numbers and booleans as String() gives them), the command
// then the output, the summary. Parts are joined by newlines, empty ones
// left out; a part over 16 KiB (UTF-8) is cut to its first and last 8 KiB,
// at character boundaries.
//
// role is pifs's: user, assistant, tool, bash, summary, custom, name,
// label, or "" for entries that hold no text to find. time is
// new Date(entry.timestamp).getTime() (null when invalid).
//
// Files are copied into a temporary folder before pi opens them (pi
// rewrites a migrated file and adds a missing final newline).
import { copyFileSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import { coreDir, oracleDir } from "./pi.mjs";

const { SessionManager } = await import(pathToFileURL(join(coreDir(), "session-manager.js")).href);
const { contentText } = await import(
	pathToFileURL(join(oracleDir(), "node_modules", "@earendil-works", "pi-ai", "dist", "utils", "text.js")).href
);

const MAX_PART = 16 << 10;
const KEEP_PART = 8 << 10;

const store = process.argv[2];
if (!store) {
	process.stderr.write("usage: searchtext.mjs <store-dir>\n");
	process.exit(2);
}

function sessionFiles(dir) {
	const out = [];
	for (const de of readdirSync(dir, { withFileTypes: true })) {
		const p = join(dir, de.name);
		if (de.isDirectory()) {
			for (const f of readdirSync(p, { withFileTypes: true })) {
				if (f.isFile() && f.name.endsWith(".jsonl")) out.push(join(p, f.name));
			}
		} else if (de.isFile() && de.name.endsWith(".jsonl")) {
			out.push(p);
		}
	}
	return out.sort();
}

/** A part cut to its head and tail when long, in UTF-8 bytes. */
function cut(s) {
	const b = Buffer.from(s, "utf8");
	if (b.length <= MAX_PART) return { text: b.toString("utf8"), cut: 0 };
	let head = KEEP_PART;
	while (head > 0 && (b[head] & 0xc0) === 0x80) head--;
	let tail = b.length - KEEP_PART;
	while (tail > 0 && (b[tail] & 0xc0) === 0x80) tail--;
	return { text: b.subarray(0, head).toString("utf8") + "\n" + b.subarray(tail).toString("utf8"), cut: tail - head };
}

/** pi-ai's contentText of a message's content, for content pi can read. */
function text(content) {
	if (typeof content === "string") return content;
	if (!Array.isArray(content)) return "";
	return contentText(content.filter((b) => typeof b === "object" && b !== null));
}

/** The leaves of a value, in the order JavaScript visits them. */
function leaves(v, out) {
	if (typeof v === "string") out.push(v);
	else if (typeof v === "number" || typeof v === "boolean") out.push(String(v));
	else if (Array.isArray(v)) for (const el of v) leaves(el, out);
	else if (typeof v === "object" && v !== null) for (const el of Object.values(v)) leaves(el, out);
	return out;
}

function blocks(content, type) {
	return Array.isArray(content) ? content.filter((b) => typeof b === "object" && b !== null && b.type === type) : [];
}

function str(v) {
	return typeof v === "string" ? v : "";
}

/** The role and parts of an entry. */
function extract(entry) {
	let role = "";
	let parts = [];
	let tools = [];
	let model = "";
	switch (entry.type) {
		case "message": {
			const m = entry.message;
			if (typeof m !== "object" || m === null) break;
			switch (m.role) {
				case "user":
					role = "user";
					parts = [text(m.content)];
					break;
				case "assistant":
					role = "assistant";
					parts = [text(m.content)];
					for (const b of blocks(m.content, "thinking")) parts.push(str(b.thinking));
					for (const b of blocks(m.content, "toolCall")) {
						parts.push(str(b.name));
						if (str(b.name)) tools.push(b.name.toLowerCase());
						leaves(b.arguments, parts);
					}
					parts.push(str(m.errorMessage));
					model = str(m.model);
					if (str(m.provider) && model) model = m.provider + "/" + model;
					model = model.toLowerCase();
					break;
				case "toolResult":
					role = "tool";
					parts = [text(m.content)];
					if (str(m.toolName)) tools.push(m.toolName.toLowerCase());
					break;
				case "bashExecution":
					role = "bash";
					parts = [str(m.command), str(m.output)];
					break;
				case "custom":
				case "hookMessage":
					role = "custom";
					parts = [text(m.content)];
					break;
				case "branchSummary":
				case "compactionSummary":
					role = "summary";
					parts = [str(m.summary)];
					break;
			}
			break;
		}
		case "custom_message":
			role = "custom";
			parts = [text(entry.content)];
			break;
		case "custom":
			if (entry.customType === "pifs.leaf") break;
			role = "custom";
			parts = leaves(entry.data, []);
			break;
		case "branch_summary":
		case "compaction":
			role = "summary";
			parts = [str(entry.summary)];
			break;
		case "session_info":
			role = "name";
			parts = [str(entry.name).trim()];
			break;
		case "label": {
			role = "label";
			const l = entry.label;
			parts = [l ? (typeof l === "string" ? l : JSON.stringify(l)) : ""];
			break;
		}
	}
	let n = 0;
	const cuts = parts.filter((p) => p !== "").map((p) => {
		const c = cut(p);
		n += c.cut;
		return c.text;
	});
	return { role, text: cuts.join("\n"), cut: n, tools, model };
}

const tmp = mkdtempSync(join(tmpdir(), "pifs-searchtext-"));
try {
	for (const path of sessionFiles(store)) {
		const copy = join(tmp, relative(store, path).replaceAll("/", "_"));
		copyFileSync(path, copy);
		let sm;
		try {
			if (statSync(copy).size === 0) continue;
			sm = SessionManager.open(copy, tmp);
		} catch {
			continue; // not a session pi opens
		}
		const name = sm.getSessionName() ?? null;
		for (const entry of sm.getEntries()) {
			if (typeof entry.id !== "string") continue;
			const t = new Date(entry.timestamp).getTime();
			const label = sm.getLabel(entry.id);
			process.stdout.write(
				JSON.stringify({
					file: relative(store, path),
					id: entry.id,
					type: entry.type ?? null,
					time: Number.isNaN(t) ? null : t,
					...extract(entry),
					label: label === undefined ? null : label,
					name,
				}) + "\n",
			);
		}
	}
} finally {
	rmSync(tmp, { recursive: true, force: true });
}
