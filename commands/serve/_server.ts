/**
 * The dashboard's requests: the `Host` check and the token check on every
 * one, the routes of the spec, an action's form read no further than its
 * limit, and the security headers on every response, whatever its kind.
 *
 * @module
 */

import {
  errorText,
  VIEW_OPTIONS,
  type ViewKey,
  type ViewSettings,
} from "../../mod.ts";
import { ACTION_NAMES, type ActionName, postAction } from "./_actions.ts";
import { APP_CSS, APP_JS } from "./_assets.ts";
import {
  type Access,
  checkToken,
  knownHost,
  sameOrigin,
  tokenCookie,
} from "./_auth.ts";
import { FleetUnanswered } from "./_fleet_runs.ts";
import { Hubs } from "./_hub.ts";
import { RenderCache } from "./_render_cache.ts";
import type { PageContext } from "./_model.ts";
import { contractPage, messagePage, runPage, runsPage } from "./_pages.ts";
import type { RunIndex, WatchedRoot } from "./_runs.ts";
import { runEventStream, type StreamedEvents } from "./_run_stream.ts";
import { runsStream, SSE_HEADERS, startSeq } from "./_sse.ts";
import {
  json,
  notAllowed,
  notFound,
  page,
  readForm,
  respond,
  TEXT,
  text,
  TooLarge,
} from "./_responses.ts";

export { CSP, refusal } from "./_responses.ts";

/** The most events one `/rendered` request renders. */
const MAX_RENDERED = 1_000;

/** A run id as the runner writes them. */
const RUN_ID = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * The most an action's form may hold (bytes as sent): a steer's text is at
 * most 60 KiB, which urlencodes to at most three times that.
 */
export const ACTION_BODY_LIMITS: Readonly<Record<ActionName, number>> = {
  steer: 256 * 1024,
  view: 16 * 1024,
  amend: 256 * 1024,
  relax: 256 * 1024,
};

/** What the server needs to answer. */
export interface DashboardOptions {
  /** The runs it shows. */
  index: RunIndex;
  /** The access token. */
  token: string;
  /** Where the dashboard is served (its hosts, origins and cookie). */
  access: Access;
  /** The author of web actions (`web:<name>`). */
  author: string;
  /** Aborted when the server stops: every stream ends. */
  stop: AbortSignal;
}

/**
 * One dashboard server's state: what it was started with, its runs'
 * shared followers and its rendered events. Two servers in one process
 * share none of it.
 */
export class Dashboard {
  /** What it answers with. */
  readonly options: DashboardOptions;
  /** Its runs' shared followers, one per run and what it streams. */
  readonly hubs: Hubs = new Hubs();
  /** Its rendered events, one renderer per run and view. */
  readonly renders: RenderCache;

  /** A dashboard answering with `options`; its followers stop with `stop`. */
  constructor(options: DashboardOptions) {
    this.options = options;
    this.renders = new RenderCache((ref, from, to) =>
      options.index.readEvents(ref, from, to)
    );
    if (options.stop.aborted) this.hubs.close();
    else {
      options.stop.addEventListener("abort", () => this.hubs.close(), {
        once: true,
      });
    }
  }

  /** Answers one request (see {@linkcode handleRequest}). */
  handle(request: Request): Promise<Response> {
    return handleRequest(this, request);
  }
}

/** A run path's parts: `/run/{root}/{run}[/{rest…}]`. */
interface RunPath {
  root: WatchedRoot;
  run: string;
  rest: string[];
}

function runPath(
  index: RunIndex,
  segments: string[],
): RunPath | null | "unknown" {
  if (segments[0] !== "run" || segments.length < 3) return null;
  const root = index.root(segments[1]!);
  const run = segments[2]!;
  if (root === undefined || !RUN_ID.test(run)) return "unknown";
  return { root, run, rest: segments.slice(3) };
}

function decodeSegments(pathname: string): string[] | null {
  try {
    return pathname.split("/").slice(1).map(decodeURIComponent);
  } catch {
    return null;
  }
}

function withOverrides(
  base: ViewSettings,
  query: URLSearchParams,
): ViewSettings {
  const view = { ...base } as Record<ViewKey, string>;
  for (const key of Object.keys(VIEW_OPTIONS) as ViewKey[]) {
    const given = query.get(key);
    if (
      given !== null && (VIEW_OPTIONS[key] as readonly string[]).includes(given)
    ) {
      view[key] = given;
    }
  }
  return view as unknown as ViewSettings;
}

function runUrl(path: RunPath): string {
  return `/run/${encodeURIComponent(path.root.key)}/${
    encodeURIComponent(path.run)
  }`;
}

async function rendered(
  dashboard: Dashboard,
  path: RunPath,
  query: URLSearchParams,
): Promise<Response> {
  const from = Number(query.get("from") ?? "1");
  const to = Number(query.get("to") ?? String(from + MAX_RENDERED - 1));
  if (
    !Number.isInteger(from) || !Number.isInteger(to) || from < 1 || to < from
  ) {
    return json({ error: "from and to must be seqs with from <= to" }, 400);
  }
  const ref = dashboard.options.index.refOf(path.root, path.run);
  const last = Math.min(to, from + MAX_RENDERED - 1);
  const view = await dashboard.options.index.runView(path.root, path.run);
  return json(
    await dashboard.renders.rendered(
      ref,
      withOverrides(view, query),
      from,
      last,
    ),
  );
}

function refusedAction(
  request: Request,
  status: number,
  reason: string,
): Response {
  const accept = request.headers.get("accept") ?? "";
  return accept.includes("application/json")
    ? json({ outcome: "refused", reason }, status)
    : text(reason, status);
}

async function action(
  options: DashboardOptions,
  path: RunPath,
  name: ActionName,
  request: Request,
): Promise<Response> {
  if (request.method !== "POST") return notAllowed("POST");
  if (!sameOrigin(request, options.access)) {
    return text("Forbidden: the request did not come from the dashboard", 403);
  }
  const limit = ACTION_BODY_LIMITS[name];
  let form: Request;
  try {
    form = await readForm(request, limit);
  } catch (error) {
    return error instanceof TooLarge
      ? refusedAction(
        request,
        413,
        `The ${name} form is too large: the limit is ${limit} bytes`,
      )
      : refusedAction(request, 400, "The form could not be read");
  }
  const place = await options.index.actionPlace(path.root, path.run);
  const result = await postAction(
    name,
    form,
    { ...place, author: options.author },
    (text) => options.index.redact(text),
  );
  const accept = request.headers.get("accept") ?? "";
  if (accept.includes("application/json")) {
    return json(result.body, result.status);
  }
  const query = new URLSearchParams(result.query).toString();
  return respond(null, 303, { location: `${runUrl(path)}?${query}` });
}

async function route(
  dashboard: Dashboard,
  request: Request,
  url: URL,
): Promise<Response> {
  const options = dashboard.options;
  const segments = decodeSegments(url.pathname);
  if (segments === null) return notFound();
  const fleet = options.index.fleet?.shown ?? null;
  const context: PageContext = { author: options.author, fleet };
  const get = request.method === "GET" || request.method === "HEAD";
  const path = runPath(options.index, segments);
  if (path === "unknown") return notFound("No such run on this dashboard.");
  // A fleet run the fleet does not hold (or the fleet TARGETs leave out)
  // is not read at all.
  if (
    path !== null && path.root.fleet !== null &&
    !await options.index.hasRun(path.root, path.run)
  ) {
    return notFound("No such run on this dashboard.");
  }
  if (path !== null) {
    const [what, more, ...extra] = path.rest;
    if (
      what !== undefined && more === undefined &&
      (ACTION_NAMES as readonly string[]).includes(what)
    ) {
      return await action(options, path, what as ActionName, request);
    }
    if (!get) return notAllowed("GET");
    const ref = options.index.refOf(path.root, path.run);
    if (what === undefined) {
      const model = await options.index.pageModel(
        path.root,
        path.run,
        url.searchParams,
      );
      if (model === null) return notFound("No such run on this dashboard.");
      return page(runPage(model, context));
    }
    if (
      what === "events" && extra.length === 0 &&
      (more === undefined || more === "rendered")
    ) {
      // A 404 ends a browser's EventSource; an empty stream would be retried.
      if (!await options.index.hasRun(path.root, path.run)) {
        return notFound("No such run on this dashboard.");
      }
      const events: StreamedEvents = more === undefined ? { kind: "lines" } : {
        kind: "rendered",
        view: withOverrides(
          await options.index.runView(path.root, path.run),
          url.searchParams,
        ),
        renders: dashboard.renders,
      };
      // A client that leaves cancels the body, which stops its followers.
      return respond(
        runEventStream(
          options.index,
          dashboard.hubs,
          path.root,
          ref,
          startSeq(request, url),
          options.stop,
          events,
        ),
        200,
        SSE_HEADERS as Record<string, string>,
      );
    }
    if (what === "rendered" && more === undefined) {
      return await rendered(dashboard, path, url.searchParams);
    }
    if (what === "contract" && more !== undefined && extra.length === 0) {
      const model = await options.index.pageModel(
        path.root,
        path.run,
        url.searchParams,
      );
      if (model === null) return notFound("No such run on this dashboard.");
      if (!model.contracts.some((c) => c.prompt_id === more)) {
        return notFound(`No prompt "${more}" in this run's packet.`);
      }
      return page(contractPage(model, more, context));
    }
    return notFound();
  }
  const whole = url.pathname;
  if (
    whole === "/" || whole === "/runs/stream" || whole.startsWith("/static/")
  ) {
    if (!get) return notAllowed("GET");
  }
  switch (whole) {
    case "/":
      return page(runsPage(await options.index.rows(), context));
    case "/runs/stream":
      return respond(
        runsStream(
          options.index,
          options.stop,
        ),
        200,
        SSE_HEADERS as Record<string, string>,
      );
    case "/static/app.js":
      return respond(APP_JS, 200, {
        "content-type": "text/javascript; charset=utf-8",
      });
    case "/static/app.css":
      return respond(APP_CSS, 200, {
        "content-type": "text/css; charset=utf-8",
      });
  }
  return notFound();
}

/**
 * Answers one request: its `Host` first (403 for a host the dashboard is
 * not served at), the token next (401, or the cookie and a redirect), then
 * the route; an unexpected failure is a 500 page.
 */
export async function handleRequest(
  dashboard: Dashboard,
  request: Request,
): Promise<Response> {
  const options = dashboard.options;
  if (!knownHost(request, options.access)) {
    return text(
      `Forbidden: this dashboard is not served at ${
        JSON.stringify(request.headers.get("host") ?? "")
      } (serve --origin adds a name it is reached by)`,
      403,
    );
  }
  const url = new URL(request.url);
  const auth = checkToken(request, url, options.token, options.access.cookie);
  if (auth.kind === "unauthorized") {
    return respond(
      "Unauthorized: open the dashboard with the URL it printed (?token=...)\n",
      401,
      { "content-type": TEXT },
    );
  }
  if (auth.kind === "set_cookie") {
    return respond(null, 303, {
      location: auth.location,
      "set-cookie": tokenCookie(options.access.cookie, options.token),
    });
  }
  try {
    return await route(dashboard, request, url);
  } catch (error) {
    const detail = options.index.redact(errorText(error));
    if (error instanceof FleetUnanswered) {
      return page(messagePage("Fleet unreachable", detail), 503);
    }
    return page(messagePage("Internal error", detail), 500);
  }
}
