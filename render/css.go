package render

// css is the page's whole stylesheet: light and dark, one colour per role.
// The summary comes last in the page (appendFoot) but shows under the
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
main{order:3;padding-bottom:1rem}
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
.md{overflow-wrap:anywhere;margin:.3rem 0}
.md>:first-child{margin-top:0}.md>:last-child{margin-bottom:0}
.md h1,.md h2,.md h3,.md h4{font-size:1.05rem;margin:.8rem 0 .3rem}
.md p,.md ul,.md ol,.md blockquote{margin:.4rem 0}
.md blockquote{border-left:3px solid var(--line);padding-left:.8rem;color:var(--muted)}
.md table{width:auto;text-align:left}
.md td,.md th{text-align:left;border-bottom:1px solid var(--line)}
.md td:last-child{font-weight:inherit}
.md code{background:var(--code);border-radius:4px;padding:0 .25rem}
.md pre code{background:none;padding:0}
.md .html{white-space:pre-wrap;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.84rem}
.chroma{border-radius:6px;padding:.5rem .7rem}
figure.image{margin:.4rem 0}
figure.image img{max-width:100%;height:auto;border:1px solid var(--line);border-radius:6px;background:repeating-conic-gradient(#ccc 0 25%,#fff 0 50%) 0 0/16px 16px}
.diff .add{color:#1a7f37;background:rgba(46,160,67,.12)}
.diff .del{color:#cf222e;background:rgba(248,81,73,.12)}

.call-ref{margin:0;font-size:.8rem;color:var(--muted)}
.assistant+.tool-result,.tool-result+.tool-result{margin-top:-.4rem;border-top-left-radius:0;border-top-right-radius:0}
.hidden{opacity:.85;border-style:dashed}
.badge.muted{background:var(--code);color:var(--muted)}
.system-prompt h4{margin:.6rem 0 .2rem;font-size:.85rem}
dl.tools{grid-template-columns:max-content 1fr}
ul.params{margin:.2rem 0;padding-left:1.2rem;font-size:.85em}
.params .req{color:var(--err)}.params .opt{color:var(--muted)}
`

// sessionCSS is what the session's page adds: the tree as a sidebar, the
// filters, the toggles, and the branch shown (see SessionHTML). It holds
// no "<" (it goes inside <style>).
const sessionCSS = `
body.session-page{display:grid;grid-template-columns:minmax(16rem,26rem) minmax(0,1fr);align-items:start}
.session-page>input{position:absolute;opacity:0;width:1px;height:1px;margin:0;pointer-events:none}
.session-page>label{display:none}
#content{grid-column:2;grid-row:1;min-width:0;display:flex;flex-direction:column;align-items:center;padding-bottom:3rem}
#content>header.session,#content>main,#content>section.summary,#content>details.unreached{width:100%;max-width:60rem;padding:0 1rem;order:0}
#content>section.summary{margin-top:1rem}
nav.tree{grid-column:1;grid-row:1;position:sticky;top:0;height:100vh;overflow:auto;padding:.8rem .6rem;background:var(--card);border-right:1px solid var(--line)}
nav.tree h2{font-size:.8rem;text-transform:uppercase;letter-spacing:.05em;color:var(--muted);margin:0 0 .4rem}
.filters,.actions{display:flex;flex-wrap:wrap;gap:.3rem;margin:.3rem 0 .6rem}
.filters label,.actions label,.actions a{font-size:.78rem;border:1px solid var(--line);border-radius:5px;padding:.05rem .5rem;cursor:pointer;text-decoration:none;color:var(--fg);background:var(--card)}
#f-default:checked~nav label[for=f-default],#f-no-tools:checked~nav label[for=f-no-tools],#f-user-only:checked~nav label[for=f-user-only],#f-labeled-only:checked~nav label[for=f-labeled-only],#f-all:checked~nav label[for=f-all],
#t-thinking:checked~#content label[for=t-thinking],#t-tools:checked~#content label[for=t-tools],#t-hidden:checked~#content label[for=t-hidden]{background:var(--user);border-color:var(--user);color:#fff}
ol.rows{list-style:none;padding:0;margin:0;font:.74rem/1.5 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
ol.rows li{white-space:pre}
ol.rows a{text-decoration:none;color:inherit;display:block}
ol.rows a:hover{background:var(--code)}
ol.rows .on a{font-weight:650}
#f-default:checked~nav .r:not(.f0),#f-no-tools:checked~nav .r:not(.f1),#f-user-only:checked~nav .r:not(.f2),#f-labeled-only:checked~nav .r:not(.f3){display:none}
.tree-status{font-size:.75rem;color:var(--muted)}
dl.stats{margin-top:.2rem}
#t-thinking:checked~#content details.thinking::details-content,#t-tools:checked~#content details.output::details-content,#t-tools:checked~#content details.tool-call::details-content,#t-hidden:checked~#content details.hidden-message::details-content{content-visibility:visible;display:block}
.entry.hidden{display:none}
#t-hidden:checked~#content .entry.hidden{display:block}
.leaf-record{display:none}
.fork{font-size:.8rem;color:var(--muted);margin:1rem 0 .2rem}
main.segs:has(:target)~section.summary,main.segs:not(:has(:target)) .seg:not(.lp),main.segs:not(:has(:target)) .al,main.segs:has(:target) .seg:not(.nw):not(:has(:target)),main.segs .kids:has(:target)>.seg:not(:has(:target)){display:none}
@media (max-width:56rem){body.session-page{display:block}nav.tree{position:static;height:auto;border-right:0;border-bottom:1px solid var(--line)}}
`
