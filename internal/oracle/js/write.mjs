// write.mjs
//
// Has pi's own SessionManager write a session. Reads one JSON object on
// stdin: {"cwd": …, "dir": …, "ops": [...]}, and prints the path of the
// file written. Each op appends what pi's own code appends, and its entry
// id is remembered by the op's index:
//
//	{"message": {...}}                     appendMessage (timestamp filled in)
//	{"customMessage": {customType, content, display, details}}
//	                                       appendCustomMessageEntry
//	{"edit": {toolCallId, path, old, new}} an edit tool's result, its
//	                                       details.diff made by pi's edit tool
//	{"branch": k}                          branch to op k's entry
//	{"branchSummary": [k, summary]}        branchWithSummary from op k's entry
//	{"label": [k, label]}                  appendLabelChange on op k's entry
//	{"name": name}                         appendSessionInfo
//	{"model": [provider, modelId]}         appendModelChange
import { join } from "node:path";
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { coreDir } from "./pi.mjs";

const { SessionManager } = await import(pathToFileURL(join(coreDir(), "session-manager.js")).href);
const { generateDiffString } = await import(pathToFileURL(join(coreDir(), "tools", "edit-diff.js")).href);

const spec = JSON.parse(readFileSync(0, "utf8"));
const sm = SessionManager.create(spec.cwd, spec.dir);
const ids = [];
for (const op of spec.ops) {
	let id = null;
	if (op.message) {
		id = sm.appendMessage({ timestamp: Date.now(), ...op.message });
	} else if (op.customMessage) {
		const c = op.customMessage;
		id = sm.appendCustomMessageEntry(c.customType, c.content, c.display, c.details);
	} else if (op.edit) {
		const e = op.edit;
		const details = generateDiffString(e.old, e.new);
		id = sm.appendMessage({
			role: "toolResult",
			toolCallId: e.toolCallId,
			toolName: "edit",
			content: [{ type: "text", text: `Successfully replaced text in ${e.path}.` }],
			details,
			isError: false,
			timestamp: Date.now(),
		});
	} else if (op.branch !== undefined) {
		sm.branch(ids[op.branch]);
	} else if (op.branchSummary) {
		id = sm.branchWithSummary(ids[op.branchSummary[0]], op.branchSummary[1]);
	} else if (op.label) {
		id = sm.appendLabelChange(ids[op.label[0]], op.label[1]);
	} else if (op.name !== undefined) {
		id = sm.appendSessionInfo(op.name);
	} else if (op.model) {
		id = sm.appendModelChange(op.model[0], op.model[1]);
	} else {
		throw new Error(`unknown op ${JSON.stringify(op)}`);
	}
	ids.push(id);
}
process.stdout.write(sm.getSessionFile() + "\n");
