// @ts-check
/**
 * Debugger sessions: which tabs the extension has attached chrome.debugger to, and the CDP
 * commands and events that go through them.
 *
 * Four sets, kept in chrome.storage.session so a restarted service worker picks them up
 * (THREATS E7): `attached` (the debugger is attached now), `wanted` (keep it attached: re-attach
 * after a navigation to a page that dropped it, or after `target_closed` while the tab lives),
 * `canceled` (the person pressed Cancel on Chrome's bar: never re-attach without their consent),
 * `shared` (the person shared the tab from the popup: in scope for agents until they unshare it).
 * Commands in flight on a tab fail at once, with a clear reason, when its session ends. When no
 * app drives the browser any more every tab is let go (`releaseAll`). The denylist is checked
 * here, before any command reaches chrome.debugger.
 */

import { autoAttachBlockReason, cdpBlockReason } from "../shared/denylist.js";
import { ChromeFailure, CommandError, chromeFailure, describeChromeError, mayResend } from "../shared/errors.js";
import { ErrorCode } from "../shared/protocol.js";
import { isRestrictedUrl } from "../shared/validation.js";
import { hideCue, showCue } from "./cue.js";
import { SessionKeys } from "./settings.js";

const DEFAULT_VERSION = "1.3";
// Chrome swaps a tab's page into another process now and then (its PDF viewer loading, a frame
// isolated anew): meanwhile it answers as if the debugger were detached, or detaches it for a
// moment. While the tab is kept attached, a command that only reads is sent again (once the
// tab is attached again), this often.
// Auto-attaching off: Chrome lets go of the child sessions of the tab's frames in other processes.
const LET_FRAMES_GO = Object.freeze({ autoAttach: false, waitForDebuggerOnStart: false, flatten: true });
const RESEND_TRIES = 20;
const RESEND_AFTER_MS = 50;

/**
 * @typedef {object} PendingCommand
 * @property {string} method
 * @property {string | undefined} sessionId the child session it was sent to (undefined: the tab's)
 * @property {(error: CommandError) => void} fail
 */

export class DebuggerSessions {
  /** @type {Set<number>} */ #attached = new Set();
  /** @type {Set<number>} */ #wanted = new Set();
  /** @type {Set<number>} */ #canceled = new Set();
  /** @type {Set<number>} */ #shared = new Set();
  /** @type {Map<number, Promise<void>>} */ #attaching = new Map();
  /** @type {Map<number, Set<PendingCommand>>} */ #pending = new Map();
  // The tabs' child sessions, each with its tab and the session it was attached in (undefined:
  // the tab's own), while they last: a session that ends ends those attached in it.
  /** @type {Map<string, {tabId: number, parent: string | undefined}>} */ #children = new Map();
  // Counts releaseAll calls: an attach asked for before one must not outlive it.
  #releases = 0;

  /**
   * @param {object} deps
   * @param {import("./chrome_api.js").ChromeApi} deps.api
   * @param {(tabId: number, method: string, params: Record<string, unknown>, sessionId?: string) => void} deps.onEvent
   * @param {(attachedTabs: number[]) => void} deps.onChange called whenever the attached set changes
   * @param {boolean} [deps.cue] draw the on-page cue on attached tabs (default true)
   */
  constructor({ api, onEvent, onChange, cue = true }) {
    this.api = api;
    this.onEventCallback = onEvent;
    this.onChangeCallback = onChange;
    this.cue = cue;
  }

  /** @param {number} tabId */
  isAttached(tabId) {
    return this.#attached.has(tabId);
  }

  /**
   * Whether the person shared this tab from the popup (and has not taken it back).
   * @param {number} tabId
   */
  isSharedByPerson(tabId) {
    return this.#shared.has(tabId);
  }

  /** @returns {number[]} */
  attachedTabs() {
    return [...this.#attached].sort((a, b) => a - b);
  }

  /**
   * After a service-worker start: re-adopt the sessions a previous instance attached (they
   * outlive the worker), re-attach wanted tabs that lost theirs, forget tabs that are gone.
   */
  async restore() {
    const stored = (await this.api.storage.session.get([SessionKeys.DEBUGGER]))[SessionKeys.DEBUGGER] ?? {};
    this.#wanted = new Set(integers(stored.wanted));
    this.#canceled = new Set(integers(stored.canceled));
    this.#shared = new Set(integers(stored.shared));
    /** @type {Array<{tabId?: number, attached: boolean, type: string}>} */
    const targets = await this.api.debugger.getTargets();
    const tabs = new Map(targets.filter((t) => t.tabId !== undefined).map((t) => [t.tabId, t]));
    for (const tabId of [...this.#wanted]) {
      const target = tabs.get(tabId);
      if (target === undefined) {
        this.#wanted.delete(tabId);
      } else if (target.attached && (await this.#owns(tabId))) {
        this.#attached.add(tabId);
      } else {
        await this.#attachNow(tabId, DEFAULT_VERSION).catch(() => {
          // A restricted page or a tab that is closing: onTabUpdated tries again.
        });
      }
    }
    for (const set of [this.#canceled, this.#shared]) {
      for (const tabId of [...set]) {
        if (!tabs.has(tabId)) set.delete(tabId);
      }
    }
    await this.#changed();
  }

  /**
   * Attach the debugger to a tab (nothing to do when it already is).
   *
   * @param {number} tabId
   * @param {{version?: string, byUser?: boolean}} [options] byUser: the person asked (popup),
   *   which also lifts an earlier cancel
   * @throws {CommandError} no_tab, restricted_url, canceled_by_user, detached
   */
  async attach(tabId, { version = DEFAULT_VERSION, byUser = false } = {}) {
    const releases = this.#releases;
    if (this.#canceled.has(tabId) && !byUser) {
      throw new CommandError(
        `The person stopped Tabrelay's debugging of tab ${tabId} (Cancel on Chrome's bar); ` +
          "they can share it again from the Tabrelay popup",
        ErrorCode.CANCELED_BY_USER,
      );
    }
    await this.#requireDebuggable(tabId);
    if (byUser) {
      this.#canceled.delete(tabId);
      this.#shared.add(tabId);
    }
    if (this.#attached.has(tabId)) {
      this.#wanted.add(tabId);
      await this.#changed();
      return;
    }
    await this.#attachNow(tabId, version, releases);
  }

  /**
   * Detach the debugger from a tab; the tab is no longer kept attached.
   * @param {number} tabId
   * @param {{byUser?: boolean}} [options] byUser: the person unshared the tab (popup)
   */
  async detach(tabId, { byUser = false } = {}) {
    this.#wanted.delete(tabId);
    if (byUser) {
      this.#shared.delete(tabId);
    }
    await this.#detachNow(tabId);
    await this.#changed();
  }

  /**
   * No app drives this browser any more (it quit, unpaired or rejected it, or is gone): detach
   * every tab, which takes the cue off the page and Chrome's bar away, and forget which tabs to
   * keep attached and which the person shared, so nothing comes back until someone asks again.
   * A tab the person cancelled stays cancelled.
   */
  async releaseAll() {
    this.#releases += 1;
    await Promise.allSettled([...this.#attaching.values()]);
    const tabs = [...this.#attached];
    if (tabs.length === 0 && this.#wanted.size === 0 && this.#shared.size === 0) {
      return;
    }
    this.#wanted.clear();
    this.#shared.clear();
    await Promise.all(tabs.map((tabId) => this.#detachNow(tabId)));
    await this.#changed();
  }

  /**
   * Send one CDP command to a tab, attaching first if needed.
   *
   * @param {number} tabId
   * @param {string} method
   * @param {Record<string, unknown> | undefined} params
   * @param {string | undefined} [sessionId] a child session (flat protocol)
   * @returns {Promise<unknown>} the CDP result
   * @throws {CommandError} blocked_method before anything is sent; the codes of attach; or the
   *   CDP error
   */
  async send(tabId, method, params, sessionId) {
    const blocked = cdpBlockReason(method) ?? (method === "Target.setAutoAttach" ? autoAttachBlockReason(params) : null);
    if (blocked !== null) {
      throw new CommandError(`method not allowed: ${blocked}`, ErrorCode.BLOCKED_METHOD);
    }
    if (!this.#attached.has(tabId)) {
      await this.attach(tabId);
    }
    const target = sessionId === undefined ? { tabId } : { tabId, sessionId };
    for (let tries = 1; ; tries++) {
      try {
        return await this.#tracked(tabId, method, this.api.debugger.sendCommand(target, method, params ?? {}), sessionId);
      } catch (error) {
        const kept = this.#wanted.has(tabId) && !this.#canceled.has(tabId);
        if (tries >= RESEND_TRIES || !kept || !mayResend(error, method)) throw error;
        await new Promise((resolve) => setTimeout(resolve, RESEND_AFTER_MS));
        if (!this.#attached.has(tabId)) await this.attach(tabId);
      }
    }
  }

  /**
   * A document request the app's navigation guard holds (Fetch.requestPaused) could not be
   * sent to the app, which is not connected: let it through, or the tab could load nothing
   * until the app is back. Without the app no agent reads the page, and the app checks every
   * tab's page again before any tool touches it.
   * @param {number} tabId
   * @param {Record<string, unknown>} paused the event's params
   * @param {string} [sessionId] the child session it was paused in (a frame of another process)
   */
  letThrough(tabId, paused, sessionId) {
    if (typeof paused.requestId !== "string" || !this.#attached.has(tabId)) return;
    const target = sessionId === undefined ? { tabId } : { tabId, sessionId };
    this.api.debugger
      .sendCommand(target, "Fetch.continueRequest", { requestId: paused.requestId })
      .catch(() => {
        // The request or the tab went away meanwhile.
      });
  }

  /**
   * The connection to the app ended: stop holding document requests in every tab (disabling
   * the Fetch domain releases the ones held), and let go of the tab's frames in other
   * processes the app attached to (with their own held requests). The app enables both again
   * when an agent returns.
   */
  async stopHolding() {
    const quietly = () => {
      // A tab that is closing: nothing is held there any more.
    };
    await Promise.all(
      [...this.#attached].flatMap((tabId) => [
        this.api.debugger.sendCommand({ tabId }, "Fetch.disable", {}).catch(quietly),
        this.api.debugger.sendCommand({ tabId }, "Target.setAutoAttach", LET_FRAMES_GO).catch(quietly),
      ]),
    );
  }

  // --- chrome.debugger and chrome.tabs events (registered by service_worker.js) -------------

  /**
   * @param {{tabId?: number, sessionId?: string}} source
   * @param {string} method
   * @param {object | undefined} params
   */
  handleEvent(source, method, params) {
    if (source.tabId !== undefined) {
      // A CDP event's params are a JSON object (the CDP protocol's, never another value).
      const given = /** @type {Record<string, unknown>} */ (params ?? {});
      if (typeof given.sessionId === "string") {
        if (method === "Target.attachedToTarget") {
          this.#children.set(given.sessionId, { tabId: source.tabId, parent: source.sessionId });
        } else if (method === "Target.detachedFromTarget") {
          this.#childEnded(source.tabId, given.sessionId);
        }
      }
      this.onEventCallback(source.tabId, method, given, source.sessionId);
    }
  }

  /**
   * A child session of a tab ended (its frame went to another process, or away). Chrome may
   * never answer a command it was running (Target.setAutoAttach of a frame being removed is
   * one): fail those at once, and those of the sessions attached in it, which end with it.
   * @param {number} tabId
   * @param {string} sessionId
   */
  #childEnded(tabId, sessionId) {
    const ended = new Set([sessionId]);
    for (let grew = true; grew; ) {
      grew = false;
      for (const [child, { parent }] of this.#children) {
        if (parent !== undefined && ended.has(parent) && !ended.has(child)) {
          ended.add(child);
          grew = true;
        }
      }
    }
    for (const child of ended) this.#children.delete(child);
    for (const entry of this.#pending.get(tabId) ?? []) {
      if (entry.sessionId !== undefined && ended.has(entry.sessionId)) {
        entry.fail(new CommandError(`The frame went away while ${entry.method} was running in it (its session ${entry.sessionId} ended)`));
      }
    }
  }

  /**
   * The browser ended a session: the person cancelled the bar, or the target went away.
   * @param {{tabId?: number}} source
   * @param {string} reason
   */
  async handleDetach(source, reason) {
    const tabId = source.tabId;
    if (tabId === undefined || !this.#attached.has(tabId)) {
      return;
    }
    this.#attached.delete(tabId);
    if (reason === "canceled_by_user") {
      this.#wanted.delete(tabId);
      this.#shared.delete(tabId);
      this.#canceled.add(tabId);
      this.#failPending(
        tabId,
        (method) =>
          new CommandError(
            `The person cancelled debugging of tab ${tabId} while ${method} was running (Cancel on Chrome's bar)`,
            ErrorCode.CANCELED_BY_USER,
          ),
      );
    } else {
      const tab = await this.#tab(tabId);
      if (tab === undefined) {
        this.#wanted.delete(tabId);
        this.#failPending(tabId, (method) => closedError(tabId, method));
      } else {
        this.#failPending(
          tabId,
          (method) =>
            new CommandError(
              `Tab ${tabId} was detached while ${method} was running (${reason}: it opened a page ` +
                "extensions cannot debug, or crashed)",
              ErrorCode.DETACHED,
            ),
        );
        if (this.#wanted.has(tabId) && !isRestrictedUrl(tab.url || tab.pendingUrl)) {
          this.#attachNow(tabId, DEFAULT_VERSION).catch(() => {});
        }
      }
    }
    await this.#changed();
  }

  /**
   * Re-attach a wanted tab once it shows a page the debugger may attach to again.
   * @param {number} tabId
   * @param {{url?: string, status?: string}} changeInfo
   * @param {{url?: string, pendingUrl?: string}} tab
   */
  handleTabUpdated(tabId, changeInfo, tab) {
    if (
      this.#wanted.has(tabId) &&
      !this.#attached.has(tabId) &&
      !this.#attaching.has(tabId) &&
      !this.#canceled.has(tabId) &&
      (changeInfo.url !== undefined || changeInfo.status !== undefined) &&
      !isRestrictedUrl(tab.url || tab.pendingUrl)
    ) {
      this.#attachNow(tabId, DEFAULT_VERSION).catch(() => {});
    }
  }

  /** @param {number} tabId */
  async handleTabRemoved(tabId) {
    this.#failPending(tabId, (method) => closedError(tabId, method));
    const changed = [this.#attached, this.#wanted, this.#canceled, this.#shared]
      .map((set) => set.delete(tabId))
      .some(Boolean);
    if (changed) {
      await this.#changed();
    }
  }

  // --- internals ------------------------------------------------------------------------------

  /** @param {number} tabId */
  async #detachNow(tabId) {
    if (!this.#attached.has(tabId)) return;
    if (this.cue) await hideCue(this.api, tabId);
    try {
      await this.api.debugger.detach({ tabId });
    } catch {
      // Already detached (the tab closed in between): the outcome is the same.
    }
    this.#attached.delete(tabId);
    this.#failPending(tabId, (method) => new CommandError(`Tab ${tabId} was detached while ${method} was running`, ErrorCode.DETACHED));
  }

  /**
   * @param {number} tabId
   * @param {string} version
   * @param {number} [releases] the count of releaseAll calls when the attach was asked for
   */
  async #attachNow(tabId, version, releases = this.#releases) {
    const running = this.#attaching.get(tabId);
    if (running !== undefined) {
      return running;
    }
    const attaching = (async () => {
      try {
        await this.api.debugger.attach({ tabId }, version);
      } catch (error) {
        // A previous service worker may have attached and its record was lost: adopt it.
        if (chromeFailure(error) !== ChromeFailure.ALREADY_ATTACHED || !(await this.#owns(tabId))) {
          throw describeChromeError(error, { tabId });
        }
      }
      if (releases !== this.#releases) {
        // Every tab was let go meanwhile: what was asked before that no longer holds.
        await this.api.debugger.detach({ tabId }).catch(() => {});
        throw new CommandError(`Tab ${tabId} was let go: no Tabrelay app drives this browser now`, ErrorCode.DETACHED);
      }
      this.#attached.add(tabId);
      this.#wanted.add(tabId);
      this.#canceled.delete(tabId);
      await this.#changed();
      if (this.cue) await showCue(this.api, tabId);
    })();
    this.#attaching.set(tabId, attaching);
    try {
      await attaching;
    } finally {
      this.#attaching.delete(tabId);
    }
  }

  /**
   * Whether this extension's debugger is attached to the tab (a harmless command succeeds).
   * @param {number} tabId
   */
  async #owns(tabId) {
    try {
      await this.api.debugger.sendCommand({ tabId }, "Runtime.evaluate", { expression: "0", returnByValue: true });
      return true;
    } catch {
      return false;
    }
  }

  /**
   * @param {number} tabId
   * @returns {Promise<{url?: string, pendingUrl?: string} | undefined>}
   */
  async #tab(tabId) {
    try {
      return await this.api.tabs.get(tabId);
    } catch {
      return undefined;
    }
  }

  /** @param {number} tabId */
  async #requireDebuggable(tabId) {
    const tab = await this.#tab(tabId);
    if (tab === undefined) {
      throw new CommandError(`No tab with id ${tabId}: it does not exist or was closed.`, ErrorCode.NO_TAB);
    }
    if (isRestrictedUrl(tab.url || tab.pendingUrl)) {
      throw new CommandError(
        `Tabrelay does not use tab ${tabId}: it shows a browser, extension or web store page`,
        ErrorCode.RESTRICTED_URL,
      );
    }
  }

  /**
   * Settle a command's promise, or fail it early when its tab's session ends.
   * @param {number} tabId
   * @param {string} method
   * @param {Promise<unknown>} promise
   * @param {string | undefined} sessionId the child session it was sent to
   */
  #tracked(tabId, method, promise, sessionId) {
    return new Promise((resolve, reject) => {
      let settled = false;
      /** @type {PendingCommand} */
      const entry = {
        method,
        sessionId,
        fail: (error) => {
          if (!settled) {
            settled = true;
            reject(error);
          }
        },
      };
      const commands = this.#pending.get(tabId) ?? new Set();
      commands.add(entry);
      this.#pending.set(tabId, commands);
      const done = () => {
        commands.delete(entry);
        if (commands.size === 0 && this.#pending.get(tabId) === commands) this.#pending.delete(tabId);
      };
      promise.then(
        (result) => {
          done();
          if (!settled) {
            settled = true;
            resolve(result ?? {});
          }
        },
        async (error) => {
          done();
          entry.fail(await this.#explain(error, tabId, method));
        },
      );
    });
  }

  /**
   * @param {unknown} error
   * @param {number} tabId
   * @param {string} method
   */
  async #explain(error, tabId, method) {
    const described = describeChromeError(error, { tabId });
    if (described.code === ErrorCode.DETACHED || described.code === ErrorCode.NO_TAB) {
      if (this.#canceled.has(tabId)) {
        return new CommandError(
          `The person cancelled debugging of tab ${tabId} while ${method} was running`,
          ErrorCode.CANCELED_BY_USER,
        );
      }
      if ((await this.#tab(tabId)) === undefined) {
        return closedError(tabId, method);
      }
    }
    return described;
  }

  /**
   * @param {number} tabId
   * @param {(method: string) => CommandError} error
   */
  #failPending(tabId, error) {
    const commands = this.#pending.get(tabId);
    this.#pending.delete(tabId);
    for (const [child, held] of this.#children) {
      if (held.tabId === tabId) this.#children.delete(child); // they end with the tab's session
    }
    for (const entry of commands ?? []) {
      entry.fail(error(entry.method));
    }
  }

  async #changed() {
    await this.api.storage.session.set({
      [SessionKeys.DEBUGGER]: {
        attached: this.attachedTabs(),
        wanted: [...this.#wanted],
        canceled: [...this.#canceled],
        shared: [...this.#shared],
      },
    });
    this.onChangeCallback(this.attachedTabs());
  }
}

/**
 * @param {number} tabId
 * @param {string} method
 */
function closedError(tabId, method) {
  return new CommandError(`Tab ${tabId} was closed while ${method} was running`, ErrorCode.NO_TAB);
}

/**
 * @param {unknown} value
 * @returns {number[]}
 */
function integers(value) {
  return Array.isArray(value) ? value.filter((v) => Number.isSafeInteger(v)) : [];
}
