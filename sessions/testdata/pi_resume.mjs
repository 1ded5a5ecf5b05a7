// pi_resume.mjs FILE
//
// Opens a session as pi does when it resumes one (SessionManager.open on a
// copy, so the file is never touched), prints "opened N", then builds the
// context pi would send (buildSessionContext) and prints "resumed M". A
// file pi cannot resume ends the process before the second line (run it
// with a small --max-old-space-size: a walk that never ends fills the heap).
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { pathToFileURL } from "node:url";

const { SessionManager } = await import(
	pathToFileURL(join(process.env.PIFS_ORACLE_DIR, "node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js")).href
);
const dir = mkdtempSync(join(tmpdir(), "pi-resume-"));
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
const copy = join(dir, basename(process.argv[2]));
copyFileSync(process.argv[2], copy);
const sm = SessionManager.open(copy, dir);
console.log(`opened ${sm.getEntries().length}`);
const ctx = sm.buildSessionContext();
console.log(`resumed ${ctx.messages.length}`);
