// settings-hooks.mjs: module hooks for layout.mjs. pi's settings-manager.js
// imports http-dispatcher.js only for its HTTP idle-timeout setting; that
// module loads undici, which needs a newer Node (zlib zstd, 22.15+) at load
// time. On an older Node, layout.mjs registers these hooks, which hand
// settings-manager.js a stand-in with the same two exports; reading
// sessionDir does not touch them.
const STUB =
	"export const DEFAULT_HTTP_IDLE_TIMEOUT_MS = 300000;" +
	"export function parseHttpIdleTimeoutMs(value) { return typeof value === 'number' ? value : undefined; }";

export async function resolve(specifier, context, next) {
	if (specifier === "./http-dispatcher.js" && context.parentURL?.endsWith("/dist/core/settings-manager.js")) {
		return { url: `data:text/javascript,${encodeURIComponent(STUB)}`, shortCircuit: true };
	}
	return next(specifier, context);
}
