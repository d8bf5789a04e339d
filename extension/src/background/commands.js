// @ts-check
/**
 * The relay methods the extension obeys, once the app has proved it knows the token: the seed
 * table of DESIGN §3 plus tabs.close, tabs.activate, tabs.get, tabs.group, downloads.search,
 * downloads.hold and downloads.decide.
 *
 * The handler table is the allowlist (THREATS E4): a method not in it gets unknown_method and
 * touches nothing, whatever its name ("__proto__", "chrome.management.setEnabled"…). Every
 * parameter is validated before any chrome.* call.
 */

import { CommandError } from "../shared/errors.js";
import { ErrorCode, EXTENDED_METHODS, SEED_METHODS } from "../shared/protocol.js";
import {
  MAX_DOWNLOADS_FOUND,
  cdpParams,
  checkNavigationUrl,
  debuggerVersion,
  downloadDecideParams,
  downloadSearchParams,
  groupParams,
  optionalBoolean,
  requireTabId,
  screenshotParams,
} from "../shared/validation.js";
import { WithTab } from "../shared/frames.js";
import { GROUP_TITLE } from "./tab_registry.js";

/**
 * @typedef {(params: Record<string, unknown>) => Promise<unknown>} Handler
 */

export class CommandRouter {
  /** @type {Map<string, Handler>} */ #handlers;

  /**
   * @param {object} deps
   * @param {import("./tab_registry.js").TabRegistry} deps.tabs
   * @param {import("./debugger_sessions.js").DebuggerSessions} deps.sessions
   * @param {() => number} deps.relayPort
   * @param {{search: Function}} [deps.downloads] chrome.downloads (through the facade)
   * @param {import("./download_hold.js").DownloadHold} [deps.hold] the downloads held for the app
   */
  constructor({ tabs, sessions, relayPort, downloads, hold }) {
    /** @type {Array<[string, Handler]>} */
    const entries = [
      ["tabs.list", () => tabs.list()],
      [
        "tabs.create",
        (p) =>
          tabs.create({
            url: p.url === undefined || p.url === null ? "about:blank" : checkNavigationUrl(p.url, { relayPort: relayPort() }),
            active: optionalBoolean(p, "active") ?? true,
          }),
      ],
      ["tabs.navigate", (p) => tabs.navigate(requireTabId(p), checkNavigationUrl(p.url, { relayPort: relayPort() }))],
      ["tabs.screenshot", (p) => this.#screenshot(tabs, sessions, p)],
      ["debugger.attach", async (p) => (await sessions.attach(requireTabId(p), { version: debuggerVersion(p) }), {})],
      ["debugger.detach", async (p) => (await sessions.detach(requireTabId(p)), {})],
      [
        "cdp.send",
        async (p) => {
          const tabId = requireTabId(p);
          const { method, commandParams, sessionId, withTab } = cdpParams(p);
          const result = await sessions.send(tabId, method, commandParams, sessionId);
          // The tab as it is now the command has ended: the app's look right after needs no
          // round trip of its own. A tab that cannot be read (closed, a browser page) is left
          // out, and the app asks for it.
          return withTab ? new WithTab(result, await tabs.now(tabId).catch(() => undefined)) : result;
        },
      ],
      ["tabs.close", (p) => tabs.close(requireTabId(p))],
      ["tabs.activate", (p) => tabs.activate(requireTabId(p))],
      ["tabs.get", (p) => tabs.get(requireTabId(p))],
      [
        "tabs.group",
        (p) => {
          const { tabIds, title } = groupParams(p, GROUP_TITLE);
          return tabs.group(tabIds, title);
        },
      ],
      ["downloads.search", (p) => searchDownloads(downloads, p)],
      ["downloads.hold", async () => holding(hold).hold()],
      [
        "downloads.decide",
        async (p) => {
          const { id, allow } = downloadDecideParams(p);
          return holding(hold).decide(id, allow);
        },
      ],
    ];
    this.#handlers = new Map(entries);
  }

  /** @returns {string[]} the methods this router obeys */
  get methods() {
    return [...this.#handlers.keys()];
  }

  /**
   * Run one command.
   *
   * @param {{method: string, params: Record<string, unknown>}} command
   * @returns {Promise<unknown>} the result
   * @throws {CommandError}
   */
  async handle({ method, params }) {
    const handler = this.#handlers.get(method);
    if (handler === undefined) {
      throw new CommandError(`Unknown method: ${method.slice(0, 100)}`, ErrorCode.UNKNOWN_METHOD);
    }
    return handler(params);
  }

  /**
   * The visible tab of a window, through CDP (captureVisibleTab would need host permissions
   * for every site; the debugger permission already covers this).
   *
   * @param {import("./tab_registry.js").TabRegistry} tabs
   * @param {import("./debugger_sessions.js").DebuggerSessions} sessions
   * @param {Record<string, unknown>} p
   */
  async #screenshot(tabs, sessions, p) {
    const { windowId, format, quality } = screenshotParams(p);
    const tab = await tabs.activeTab(windowId);
    /** @type {Record<string, unknown>} */
    const capture = { format };
    if (quality !== undefined && format !== "png") {
      capture.quality = quality;
    }
    const result = /** @type {{data?: unknown}} */ (
      await sessions.send(/** @type {number} */ (tab.id), "Page.captureScreenshot", capture)
    );
    if (typeof result?.data !== "string") {
      throw new CommandError("The browser returned no screenshot");
    }
    return { dataUrl: `data:image/${format};base64,${result.data}` };
  }
}

/**
 * The downloads started from one address since a time: what the app needs to follow a download
 * an agent's action started (where the file is, how far it got), and nothing of the person's
 * other downloads. Newest first, at most MAX_DOWNLOADS_FOUND.
 *
 * @param {{search: Function} | undefined} downloads
 * @param {Record<string, unknown>} p
 */
async function searchDownloads(downloads, p) {
  const { url, startedAfter } = downloadSearchParams(p);
  if (downloads === undefined) {
    throw new CommandError("This browser gives the extension no downloads", ErrorCode.UNKNOWN_METHOD);
  }
  const since = { startedAfter: new Date(Math.max(0, startedAfter - 1)).toISOString(), orderBy: ["-startTime"] };
  // The address it started from, or the one it ended at after redirects.
  /** @type {Array<Array<Record<string, unknown>>>} */
  const [started, ended] = await Promise.all([downloads.search({ ...since, url }), downloads.search({ ...since, finalUrl: url })]);
  const found = [...new Map([...started, ...ended].map((item) => [item.id, item])).values()];
  found.sort((a, b) => String(b.startTime).localeCompare(String(a.startTime)));
  return found.slice(0, MAX_DOWNLOADS_FOUND).map((item) => ({
    id: item.id,
    url: item.url,
    finalUrl: item.finalUrl,
    filename: item.filename,
    mime: item.mime,
    state: item.state,
    error: item.error ?? null,
    bytesReceived: item.bytesReceived,
    totalBytes: item.totalBytes,
    fileSize: item.fileSize,
    exists: item.exists,
    startTime: item.startTime,
  }));
}

/**
 * @param {import("./download_hold.js").DownloadHold | undefined} hold
 * @returns {import("./download_hold.js").DownloadHold}
 */
function holding(hold) {
  if (hold === undefined) {
    throw new CommandError("This browser gives the extension no downloads", ErrorCode.UNKNOWN_METHOD);
  }
  return hold;
}

/** Every method the Tabrelay protocol defines; the router must implement exactly these. */
export const PROTOCOL_METHODS = Object.freeze([...SEED_METHODS, ...EXTENDED_METHODS]);
