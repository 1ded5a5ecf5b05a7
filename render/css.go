package render

// css is the page's whole stylesheet: light and dark, one colour per role.
// The summary comes last in the page (HTMLFoot) but shows under the
// header: the body is a flex column and the order properties place it.
const css = `
:root{color-scheme:light dark;--bg:#f5f6f8;--card:#fff;--fg:#1d2330;--muted:#667085;--line:#e2e5ea;--code:#f2f4f7;
--user:#2f6fed;--assistant:#12a150;--tool:#8a94a6;--err:#d92d20;--bash:#c27c0e;--custom:#8e44ad;--branch:#0e9384;--compact:#dc6803;--system:#475467}
@media (prefers-color-scheme:dark){:root{--bg:#101317;--card:#181d24;--fg:#e6e8eb;--muted:#98a2b3;--line:#29303a;--code:#212832}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.55 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",sans-serif;display:flex;flex-direction:column;align-items:center}
header.session,section.summary,main{width:100%;max-width:60rem;padding:0 1rem}
header.session{order:0;padding-top:1.5rem}
section.summary{order:1}
main{order:2;padding-bottom:3rem}
h1{font-size:1.45rem;margin:0 0 .5rem;overflow-wrap:anywhere}
.unnamed{color:var(--muted);font-weight:500}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.15rem .8rem;margin:0 0 .8rem;font-size:.88rem}
dt{color:var(--muted)}
dd{margin:0;overflow-wrap:anywhere}
table{border-collapse:separate;border-spacing:0;width:100%;font-size:.88rem;font-variant-numeric:tabular-nums;background:var(--card);border:1px solid var(--line);border-radius:8px;margin:0 0 1rem}
th,td{padding:.35rem .7rem;text-align:right}
th{color:var(--muted);font-weight:500;border-bottom:1px solid var(--line)}
td:last-child{font-weight:600}
a{color:inherit}
code,pre,.pre,.who .id,.call-id{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace}
code{font-size:.9em}
.entry{background:var(--card);border:1px solid var(--line);border-left:4px solid var(--tool);border-radius:8px;margin:.75rem 0;padding:.6rem .9rem}
.who{display:flex;flex-wrap:wrap;align-items:baseline;gap:.2rem .7rem;font-size:.8rem;color:var(--muted);margin-bottom:.35rem}
.role{font-weight:700;text-transform:uppercase;letter-spacing:.05em;color:var(--accent,var(--fg))}
.who .id{color:var(--muted);text-decoration:none}
.who .id:hover{text-decoration:underline}
.who code{color:var(--fg)}
.model{background:var(--code);border-radius:4px;padding:0 .4rem}
.text{white-space:pre-wrap;overflow-wrap:anywhere;margin:.3rem 0}
pre,.pre{white-space:pre-wrap;overflow-wrap:anywhere;font-size:.84rem;line-height:1.45;background:var(--code);border-radius:6px;padding:.5rem .7rem;margin:.35rem 0}
details{margin:.35rem 0}
summary{cursor:pointer;color:var(--muted);font-size:.82rem;user-select:none}
summary code{color:var(--fg)}
.thinking>.text{color:var(--muted);font-style:italic;border-left:2px solid var(--line);padding-left:.7rem}
.error{color:var(--err)}
.badge,.exit{border-radius:4px;padding:0 .4rem;background:var(--code)}
.badge{background:var(--err);color:#fff}
.image{color:var(--muted);font-style:italic}
.user{--accent:var(--user);border-left-color:var(--user)}
.assistant{--accent:var(--assistant);border-left-color:var(--assistant)}
.tool-result{--accent:var(--tool)}
.tool-result.failed{--accent:var(--err);border-left-color:var(--err)}
.bash{--accent:var(--bash);border-left-color:var(--bash)}
.custom,.custom-message{--accent:var(--custom);border-left-color:var(--custom)}
.branch-summary{--accent:var(--branch);border-left-color:var(--branch)}
.compaction{--accent:var(--compact);border-left-color:var(--compact)}
.system{--accent:var(--system);border-left-color:var(--system)}
.entry.meta{background:none;border:0;margin:.25rem 0;padding:0 .9rem;font-size:.8rem;color:var(--muted);display:flex;flex-wrap:wrap;gap:.2rem .6rem;align-items:baseline}
.entry.meta .role{color:var(--muted)}
.entry.meta .id{color:var(--muted);text-decoration:none;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.usage{font-variant-numeric:tabular-nums}
:target{box-shadow:0 0 0 2px var(--user)}
`
