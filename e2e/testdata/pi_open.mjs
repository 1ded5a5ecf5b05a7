// pi_open.mjs FILE
//
// Opens a session as pi does (SessionManager.open on a copy, so the file is
// never touched) and prints what pi resumes with, cheaply enough for large
// sessions: {"entries": N, "leafId": ID, "context": buildSessionContext()}.
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { pathToFileURL } from "node:url";

const { SessionManager } = await import(
	pathToFileURL(join(process.env.PIFS_ORACLE_DIR, "node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js")).href
);
const dir = mkdtempSync(join(tmpdir(), "pi-open-"));
try {
	const copy = join(dir, basename(process.argv[2]));
	copyFileSync(process.argv[2], copy);
	const sm = SessionManager.open(copy, dir);
	console.log(JSON.stringify({ entries: sm.getEntries().length, leafId: sm.getLeafId(), context: sm.buildSessionContext() }));
} finally {
	rmSync(dir, { recursive: true, force: true });
}
