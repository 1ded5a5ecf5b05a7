// list.mjs: pi's own session lists (@earendil-works/pi-coding-agent 1.6.0),
// printed as one JSON array of {path, id, cwd, name, parentSessionPath,
// created, modified, messageCount, firstMessage} in pi's order (newest first).
//
//   list.mjs all <dir>             SessionManager.listAll(dir): the .jsonl files
//                                  at the top of dir (pi's flat layout)
//   list.mjs cwd <cwd> <dir>       SessionManager.list(cwd, dir): those of them
//                                  whose header cwd is cwd (no filter when dir is
//                                  cwd's default folder)
//   list.mjs default <sessionsDir> SessionManager.listAll() with the agent dir
//                                  set so that getSessionsDir() is sessionsDir:
//                                  the files one folder down (pi's default layout)
//
// Dates are ISO strings, or null when invalid.
import { mkdtempSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { coreDir } from "./pi.mjs";

const { SessionManager } = await import(pathToFileURL(join(coreDir(), "session-manager.js")).href);

function iso(d) {
	return d instanceof Date && !Number.isNaN(d.getTime()) ? d.toISOString() : null;
}

function view(info, mapPath = (p) => p) {
	return {
		path: mapPath(info.path),
		id: info.id ?? null,
		cwd: info.cwd,
		name: info.name ?? null,
		parentSessionPath: info.parentSessionPath ?? null,
		created: iso(info.created),
		modified: iso(info.modified),
		messageCount: info.messageCount,
		firstMessage: info.firstMessage,
	};
}

const [mode, ...args] = process.argv.slice(2);
let out;
switch (mode) {
	case "all":
		if (args.length !== 1) usage();
		out = (await SessionManager.listAll(args[0])).map((i) => view(i));
		break;
	case "cwd":
		if (args.length !== 2) usage();
		out = (await SessionManager.list(args[0], args[1])).map((i) => view(i));
		break;
	case "default": {
		if (args.length !== 1) usage();
		// getSessionsDir() is $PI_CODING_AGENT_DIR/sessions, read at each call:
		// point a temporary agent dir's "sessions" at the store.
		const store = realpathSync(resolve(args[0]));
		const agent = mkdtempSync(join(tmpdir(), "pifs-list-"));
		try {
			symlinkSync(store, join(agent, "sessions"));
			process.env.PI_CODING_AGENT_DIR = agent;
			const prefix = join(agent, "sessions");
			const back = (p) => (p.startsWith(`${prefix}/`) ? join(args[0], p.slice(prefix.length + 1)) : p);
			out = (await SessionManager.listAll()).map((i) => view(i, back));
		} finally {
			rmSync(agent, { recursive: true, force: true });
		}
		break;
	}
	default:
		usage();
}
process.stdout.write(`${JSON.stringify(out)}\n`);

function usage() {
	process.stderr.write("usage: list.mjs all <dir> | cwd <cwd> <dir> | default <sessionsDir>\n");
	process.exit(2);
}
