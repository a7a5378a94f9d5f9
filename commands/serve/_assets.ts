/**
 * The dashboard's hand-written script and style sheet, served as
 * `/static/app.js` and `/static/app.css`. STUB: the pages helper replaces
 * this file (same exports).
 *
 * @module
 */

/** `/static/app.js`. */
export const APP_JS = "";

/** `/static/app.css`. */
export const APP_CSS = "";
