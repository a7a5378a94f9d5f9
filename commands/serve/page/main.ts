/**
 * The dashboard's page script (`/static/app.js`, built by `deno task gen`):
 * the page it runs on says which it is (`data-page` on `<body>`). Every node
 * is built from data with `textContent` (never `innerHTML`); it needs no
 * inline script or style.
 *
 * @module
 */

import { runPage } from "./run_page.ts";
import { runsPage } from "./runs_page.ts";

const page = document.body.getAttribute("data-page");
if (page === "runs") runsPage();
if (page === "run") runPage();
