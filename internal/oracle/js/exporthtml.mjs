// exporthtml.mjs <out-dir> <session.jsonl>... (run with Node 22)
//
// Writes pi 1.6's exported page of each session file, as `pi --export FILE
// OUT` writes it (exportFromFile), into <out-dir>/<n>.html, n the file's
// place in the arguments from 0, in one node process; prints a JSON array
// of what each export threw (null when it wrote the page).
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { coreDir } from "./pi.mjs";

const { exportFromFile } = await import(pathToFileURL(join(coreDir(), "export-html", "index.js")).href);
const [out, ...files] = process.argv.slice(2);
const errors = [];
for (const [i, f] of files.entries()) {
	try {
		await exportFromFile(f, join(out, `${i}.html`));
		errors.push(null);
	} catch (e) {
		errors.push(e instanceof Error ? e.message : String(e));
	}
}
process.stdout.write(JSON.stringify(errors), () => process.exit(0));
