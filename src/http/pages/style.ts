/**
 * The pages' one stylesheet, served as /assets/vault.css (a file of the
 * vault's own origin, so the CSP needs no inline style). Light and dark by
 * `prefers-color-scheme`; every text and control color pair meets WCAG 2.2
 * AA contrast (4.5:1 for text, 3:1 for borders and focus rings); readable
 * from 320 px wide.
 */
export const STYLESHEET = `
:root {
  color-scheme: light dark;
  --bg: #ffffff; --fg: #1b1b1f; --muted: #4a4a55; --card: #f4f5f8; --border: #767680;
  --accent: #0b57d0; --accent-fg: #ffffff; --focus: #0b57d0;
  --ok-bg: #e6f4ea; --ok-fg: #0d5224; --warn-bg: #fdf3e1; --warn-fg: #6b3f00; --err-bg: #fce8e6; --err-fg: #8c1d18;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #121316; --fg: #ececf1; --muted: #b9bac4; --card: #1e2026; --border: #8d8e99;
    --accent: #a8c7fa; --accent-fg: #0a1d3d; --focus: #a8c7fa;
    --ok-bg: #10291a; --ok-fg: #a6e3b8; --warn-bg: #2e2310; --warn-fg: #f5cf8b; --err-bg: #3a1512; --err-fg: #f4b8b2;
  }
}
* { box-sizing: border-box; }
html { font-size: 100%; }
body {
  margin: 0; background: var(--bg); color: var(--fg);
  font: 1rem/1.55 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
}
header, main, footer { max-width: 42rem; margin: 0 auto; padding: 1rem 1.25rem; }
header { padding-top: 1.5rem; }
header .brand { font-weight: 600; color: var(--muted); text-decoration: none; font-size: .95rem; }
h1 { font-size: 1.6rem; line-height: 1.25; margin: .5rem 0 1rem; }
p { margin: .5rem 0 1rem; }
.muted { color: var(--muted); }
.card { background: var(--card); border-radius: .75rem; padding: 1.25rem; margin: 1rem 0; }
label { display: block; font-weight: 600; margin: 1rem 0 .35rem; }
.help { display: block; color: var(--muted); font-size: .9rem; margin: .25rem 0 .5rem; }
input, select, textarea {
  width: 100%; font: inherit; color: var(--fg); background: var(--bg);
  border: 1px solid var(--border); border-radius: .5rem; padding: .6rem .7rem;
}
textarea { min-height: 8rem; resize: vertical; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
textarea.short { min-height: 4.5rem; font-family: inherit; }
textarea[readonly], input[readonly] { background: var(--card); }
.row { display: flex; gap: 1rem; flex-wrap: wrap; }
.row > div { flex: 1 1 10rem; }
button {
  font: inherit; font-weight: 600; cursor: pointer; border-radius: .5rem; padding: .65rem 1.1rem;
  border: 1px solid var(--accent); background: var(--accent); color: var(--accent-fg); margin: .75rem .5rem .25rem 0;
}
button.secondary { background: transparent; color: var(--fg); border-color: var(--border); }
button:disabled { opacity: .6; cursor: progress; }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
.notice { border-radius: .5rem; padding: .75rem 1rem; margin: 1rem 0; }
.notice.ok { background: var(--ok-bg); color: var(--ok-fg); }
.notice.warn { background: var(--warn-bg); color: var(--warn-fg); }
.notice.error { background: var(--err-bg); color: var(--err-fg); }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .92em; overflow-wrap: anywhere; }
h2.label { font-size: 1rem; margin: .5rem 0 .35rem; }
.file { margin-top: 1rem; }
input[type="file"] { padding: .45rem .5rem; }
form.dropping { outline: 3px dashed var(--accent); outline-offset: 4px; }
pre.secret { min-height: 4rem; max-height: 24rem; overflow: auto; border: 1px solid var(--border); margin: 0; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; background: var(--card); padding: .75rem; border-radius: .5rem; }
.receipt { border-top: 1px solid var(--border); margin-top: 1.25rem; padding-top: .75rem; }
canvas.qr { display: block; margin: 1rem 0; background: #ffffff; padding: .5rem; border-radius: .5rem; max-width: 100%; height: auto; }
/* The answer page (/r/<id>): who asked and what for; a description keeps its line breaks. */
dl.request-facts { margin: 1rem 0; }
dl.request-facts dd { margin: .2rem 0 .75rem; overflow-wrap: anywhere; }
dl.request-facts dd:last-child { margin-bottom: 0; }
dl.request-facts dd.description { font-weight: 400; font-size: 1rem; white-space: pre-wrap; }
[hidden] { display: none !important; }
footer { color: var(--muted); font-size: .85rem; }
/* The console (/ui): wider, a navigation bar, tables. */
body.console header, body.console main { max-width: 72rem; }
/* A 64-character share-link id in a heading or a button breaks rather than scroll the page sideways. */
body.console h1, body.console button, body.console dd { overflow-wrap: anywhere; }
body.console header { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1.5rem; border-bottom: 1px solid var(--border); padding-bottom: .75rem; }
nav ul { list-style: none; display: flex; flex-wrap: wrap; gap: .25rem 1rem; margin: 0; padding: 0; }
nav a, a { color: var(--accent); }
nav a[aria-current="page"] { font-weight: 700; color: var(--fg); text-decoration-thickness: 3px; }
form.signout { margin-left: auto; display: flex; align-items: center; gap: .75rem; }
form.signout button, button.small { margin: 0; padding: .3rem .7rem; font-size: .9rem; }
form.inline { display: inline-flex; gap: .5rem; align-items: center; margin: 0 .25rem 0 0; }
form.inline button { margin: .15rem 0; }
input.short { width: 10rem; padding: .3rem .5rem; }
.table-wrap { overflow-x: auto; margin: 1rem 0; }
table { border-collapse: collapse; width: 100%; font-size: .95rem; }
th, td { text-align: left; vertical-align: top; padding: .45rem .6rem; border-bottom: 1px solid var(--border); }
thead th { background: var(--card); }
td.actions details { display: inline-block; margin-right: .5rem; }
td.actions a { margin-right: .75rem; }
/* A phone (under 40rem): each row of a console table a card of labelled lines, no sideways scroll. */
@media (max-width: 40rem) {
  .table-wrap table, .table-wrap tbody, .table-wrap tr, .table-wrap th[scope="row"], .table-wrap td { display: block; width: 100%; }
  .table-wrap thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
  .table-wrap tr { border-bottom: 1px solid var(--border); padding: .4rem 0; }
  .table-wrap th[scope="row"], .table-wrap td { border-bottom: 0; padding: .15rem .6rem; }
  .table-wrap [data-label]::before { content: attr(data-label) / ""; display: block; font-size: .8rem; font-weight: 600; color: var(--muted); }
  .table-wrap [data-label=""]::before { content: none; }
}
summary { cursor: pointer; color: var(--accent); }
fieldset { border: 1px solid var(--border); border-radius: .5rem; margin: 1rem 0; padding: .5rem 1rem; }
legend { font-weight: 600; padding: 0 .25rem; }
label.choice { display: inline-flex; align-items: center; gap: .4rem; font-weight: 400; margin: .35rem 1.25rem .35rem 0; }
label.choice input { width: auto; }
dl.facts { display: grid; grid-template-columns: repeat(auto-fill, minmax(14rem, 1fr)); gap: .75rem; margin: 1rem 0; }
dl.facts > div { background: var(--card); border-radius: .75rem; padding: .75rem 1rem; }
dt { color: var(--muted); font-size: .9rem; }
dd { margin: .2rem 0 0; font-weight: 600; font-size: 1.1rem; }
ul.plain { list-style: none; margin: 0 0 .5rem; padding: 0; }
.pager { display: flex; gap: 1.5rem; margin: .5rem 0 1rem; }
a.button-link { display: inline-block; margin: .75rem .5rem .25rem 0; padding: .65rem 1.1rem; border: 1px solid var(--border); border-radius: .5rem; color: var(--fg); text-decoration: none; font-weight: 600; }
.filter { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: flex-end; }
.filter > label { margin: 0; }
.filter > input { width: auto; flex: 1 1 14rem; }
.filter .row { width: 100%; }
.sr-only { position: absolute; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; border: 0; }
`;
