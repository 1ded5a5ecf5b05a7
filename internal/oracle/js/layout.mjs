// layout.mjs: where pi 1.6 puts sessions, asked of pi itself.
//
//   layout.mjs create <agentDir>   stdin: a JSON array of {cwd, sessionDir}
//       (sessionDir null: pi's default layout). With PI_CODING_AGENT_DIR set
//       to agentDir, for each: SessionManager.create(cwd, sessionDir) and
//       SessionManager.forkFrom(<a source session>, cwd, sessionDir). Prints a
//       JSON array of {cwd: sm.getCwd(), file, fork} (absolute paths; create
//       only computes file, pi writes it at the first message).
//   layout.mjs resolve [--session-dir DIR]
//       The session directory pi's main.js picks in this process's cwd and
//       environment (the same three lines: --session-dir, then
//       $PI_CODING_AGENT_SESSION_DIR, then the sessionDir setting of
//       SettingsManager.create(cwd, getAgentDir())), and where
//       SessionManager.create(cwd, thatDir) would write. Prints
//       {sessionDir, flat, file, warnings, error}.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { coreDir, distDir } from "./pi.mjs";

const imp = (p) => import(pathToFileURL(p).href);
const [mode, ...args] = process.argv.slice(2);

async function readStdin() {
	const chunks = [];
	for await (const c of process.stdin) chunks.push(c);
	return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

if (mode === "create" && args.length === 1) {
	process.env.PI_CODING_AGENT_DIR = args[0];
	const { SessionManager } = await imp(join(coreDir(), "session-manager.js"));
	const cases = await readStdin();
	const srcDir = mkdtempSync(join(tmpdir(), "pifs-layout-"));
	try {
		const src = SessionManager.create("/src", srcDir);
		src.appendMessage({ role: "user", content: "hi", timestamp: 1 });
		const out = [];
		for (const c of cases) {
			const sm = SessionManager.create(c.cwd, c.sessionDir ?? undefined);
			const fork = SessionManager.forkFrom(src.getSessionFile(), c.cwd, c.sessionDir ?? undefined);
			out.push({ cwd: sm.getCwd(), file: resolve(sm.getSessionFile()), fork: resolve(fork.getSessionFile()) });
		}
		process.stdout.write(`${JSON.stringify(out)}\n`);
	} finally {
		rmSync(srcDir, { recursive: true, force: true });
	}
} else if (mode === "resolve" && (args.length === 0 || (args.length === 2 && args[0] === "--session-dir"))) {
	// settings-manager.js loads undici (through http-dispatcher.js), which
	// needs zlib's zstd (Node >= 22.15) at load time: see settings-hooks.mjs.
	const zlib = (await import("node:zlib")).default;
	if (typeof zlib.createZstdDecompress !== "function") {
		const { register } = await import("node:module");
		register("./settings-hooks.mjs", import.meta.url);
	}
	const { ENV_SESSION_DIR, expandTildePath, getAgentDir } = await imp(join(distDir(), "config.js"));
	const { normalizePath } = await imp(join(distDir(), "utils", "paths.js"));
	const { SettingsManager } = await imp(join(coreDir(), "settings-manager.js"));
	const { SessionManager } = await imp(join(coreDir(), "session-manager.js"));
	const flag = args[1];
	const cwd = process.cwd();
	const startupSettingsManager = SettingsManager.create(cwd, getAgentDir());
	const warnings = startupSettingsManager.drainErrors().map((e) => `${e.path ?? e.scope}: ${e.error.message}`);
	const out = { sessionDir: null, flat: false, file: null, warnings, error: null };
	try {
		// main.js, verbatim but for the names.
		const envSessionDir = process.env[ENV_SESSION_DIR];
		const sessionDir =
			(flag ? normalizePath(flag) : undefined) ??
			(envSessionDir ? expandTildePath(envSessionDir) : undefined) ??
			startupSettingsManager.getSessionDir();
		out.sessionDir = sessionDir ?? null;
		// SessionManager.create(cwd, sessionDir): a truthy sessionDir is used as is (flat).
		out.flat = Boolean(sessionDir);
		out.file = resolve(SessionManager.create(cwd, sessionDir).getSessionFile());
	} catch (e) {
		out.error = e instanceof Error ? e.message : String(e);
	}
	process.stdout.write(`${JSON.stringify(out)}\n`);
} else {
	process.stderr.write("usage: layout.mjs create <agentDir> < cases.json | layout.mjs resolve [--session-dir DIR]\n");
	process.exit(2);
}
