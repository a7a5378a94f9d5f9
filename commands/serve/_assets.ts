/**
 * The dashboard's script and style sheet, served as `/static/app.js` and
 * `/static/app.css`. The script is the page code of `page/` (TypeScript,
 * built into `_app_js.ts` by `deno task gen`): it builds every node from
 * data with `textContent` (never `innerHTML`), reads the run it shows from
 * `data-` attributes on `<body>`, and needs no inline script or style (the
 * pages are served under `script-src 'self'; style-src 'self'`).
 *
 * @module
 */

/** `/static/app.js`: the page code, built by `deno task gen`. */
export { APP_JS } from "./_app_js.ts";

/** `/static/app.css`. */
export const APP_CSS: string = `:root {
  --ink: #1d2126;
  --muted: #5d6670;
  --line: #d5d9de;
  --paper: #fbfbfa;
  --panel: #ffffff;
  --link: #1f5fa8;
  --completed: #2e7d32;
  --retried: #c77700;
  --repaired: #6a3fb0;
  --failed: #c62828;
  --interrupted: #78828c;
  --running: #1f6fd1;
  --mono: ui-monospace, "SFMono-Regular", Menlo, Consolas, "Liberation Mono", monospace;
}
* { box-sizing: border-box; }
html { background: var(--paper); color: var(--ink); }
body {
  margin: 0;
  font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif;
}
a { color: var(--link); }
header {
  display: flex; gap: .5rem; align-items: baseline;
  padding: .5rem 1rem; border-bottom: 1px solid var(--line); background: var(--panel);
}
header .home { font-weight: 600; text-decoration: none; }
header .author { margin-left: auto; color: var(--muted); }
main { padding: .75rem 1rem; }
h1 { font-size: 1.3rem; margin: .25rem 0 .75rem; }
h2 { font-size: 1rem; margin: 0 0 .5rem; }
h3 { font-size: .95rem; margin: .5rem 0 .25rem; }
section { background: var(--panel); border: 1px solid var(--line); border-radius: 4px; padding: .5rem .75rem; margin-bottom: .75rem; }
section section { border: 0; padding: 0; margin: 0; }
.empty-note, .earlier, .message, .fleet-note { color: var(--muted); }

table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .25rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-weight: 600; color: var(--muted); font-size: .85rem; }
#runs td[data-field] { white-space: nowrap; }
#runs .run-id, #runs .target { color: var(--muted); font-family: var(--mono); font-size: .85rem; }
.status-running { color: var(--running); font-weight: 600; }
.status-completed { color: var(--completed); }
.status-failed, .status-runner_gone, .status-unreachable { color: var(--failed); }
.status-interrupted { color: var(--interrupted); }
.runner-gone, .runner-unreachable { color: var(--failed); }
tr.run[data-attention] { background: var(--attention-bg, rgba(200, 40, 40, 0.12)); }
#runs tr.run[data-attention] td[data-field=attention], dd[data-field=attention]:not([data-attention=""]) { color: var(--failed); font-weight: bold; }
.runner-alive { color: var(--completed); }

.run .top, .run .middle, .run .bottom { display: grid; gap: .75rem; }
@media (min-width: 1000px) {
  .run .top { grid-template-columns: minmax(280px, 1fr) 2fr; }
  .run .middle { grid-template-columns: 2fr minmax(300px, 1fr); }
  .run .bottom { grid-template-columns: 1fr 1fr; }
}
#snapshot dl { margin: 0; display: grid; grid-template-columns: 1fr 1fr; gap: .25rem .75rem; }
#snapshot .field { display: flex; gap: .5rem; }
#snapshot dt { color: var(--muted); min-width: 5rem; }
#snapshot dd { margin: 0; font-family: var(--mono); font-size: .85rem; overflow-wrap: anywhere; }

#timeline .legend { display: flex; flex-wrap: wrap; gap: .75rem; color: var(--muted); font-size: .8rem; margin-bottom: .5rem; }
.legend-item { display: inline-flex; align-items: center; gap: .25rem; }
.swatch { display: inline-block; width: .9rem; height: .9rem; border-radius: 2px; }
#timeline .prompt { display: flex; align-items: center; gap: .5rem; padding: .2rem 0; border-top: 1px solid var(--line); }
#timeline .prompt-name { min-width: 10rem; font-family: var(--mono); font-size: .85rem; overflow-wrap: anywhere; }
#timeline .segments { display: flex; flex-wrap: wrap; gap: 2px; align-items: center; }
.attempt { display: inline-block; min-width: 4.5rem; padding: .1rem .4rem; color: #fff; border-radius: 2px; font-size: .8rem; }
.outcome-completed { background: var(--completed); }
.outcome-retried { background: var(--retried); }
.outcome-repaired { background: var(--repaired); }
.outcome-failed { background: var(--failed); }
.outcome-interrupted { background: var(--interrupted); }
.outcome-running { background: var(--running); }
.mark { display: inline-block; padding: 0 .2rem; font-weight: 700; font-size: .9rem; }
.mark.steer { color: var(--retried); }
.mark.amendment { color: var(--repaired); }

#events {
  height: 60vh; overflow: auto; background: #f4f5f6 local; border: 1px solid var(--line);
  padding: .25rem .5rem; font-family: var(--mono); font-size: 12.5px;
  contain: strict; overflow-anchor: none; will-change: scroll-position;
}
#events .chunk { contain: layout style; }
#events .show-earlier { margin-left: .5rem; font: inherit; font-size: .8rem; }
#events .event pre { margin: 0; white-space: pre-wrap; overflow-wrap: anywhere; font: inherit; }
#events .event.empty { display: none; }
#events .event[data-type=prompt_started] pre { font-weight: 700; }
#events .event[data-type=run_finished] pre { font-weight: 700; }

#actions form { border-top: 1px solid var(--line); padding: .25rem 0 .5rem; }
#actions label { display: block; margin: .25rem 0; }
#actions .label { display: block; color: var(--muted); font-size: .8rem; }
#actions label.check { display: flex; gap: .4rem; align-items: center; }
#actions textarea, #actions input[type=text], #actions select { width: 100%; font: inherit; padding: .2rem .3rem; }
#actions .submit { display: flex; gap: .75rem; align-items: center; margin-top: .3rem; }
output.outcome { font-family: var(--mono); font-size: .85rem; }
output.outcome[data-outcome=applied], output.outcome[data-outcome=recorded] { color: var(--completed); }
output.outcome[data-outcome=accepted], output.outcome[data-outcome=sending] { color: var(--running); }
output.outcome[data-outcome=rejected], output.outcome[data-outcome=refused] { color: var(--failed); }
.banner { padding: .4rem .75rem; border: 1px solid var(--line); border-radius: 4px; background: var(--panel); }
.banner.outcome-applied, .banner.outcome-recorded { border-color: var(--completed); background: #fff; color: var(--completed); }
.banner.outcome-rejected, .banner.outcome-refused { border-color: var(--failed); background: #fff; color: var(--failed); }
.banner.outcome-accepted, .banner.outcome-pending { border-color: var(--running); background: #fff; color: var(--running); }

#log { max-height: 40vh; overflow: auto; }
.log-entry { font-family: var(--mono); font-size: .8rem; padding: .1rem 0; border-bottom: 1px dotted var(--line); white-space: pre-wrap; overflow-wrap: anywhere; }
.log-entry[data-outcome=rejected] { color: var(--failed); }
.log-entry[data-outcome=applied] { color: var(--completed); }
.chain { font-size: .85rem; margin: .2rem 0 .4rem; overflow-wrap: anywhere; }
.chain[data-chain=holds] { color: var(--completed); }
.chain[data-chain=broken] { color: var(--failed); font-weight: 600; }
.contract-diff td { font-family: var(--mono); font-size: .8rem; }
.change-added td { background: #eaf5ea; }
.change-removed td { background: #fbeaea; text-decoration: line-through; }
.amendments { margin: .25rem 0; padding-left: 1.25rem; font-size: .85rem; }
.amendment.direction-relax { color: var(--failed); }
`;
