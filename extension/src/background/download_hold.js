// @ts-check
/**
 * Downloads held for the app's word (issue 26: a download an agent's action starts is an effect
 * the person approves, knowing the file, its size, its type and where it comes from).
 *
 * Once the connected app asks for it (downloads.hold), every download Chrome begins waits at
 * its file name: chrome.downloads.onDeterminingFilename, whose listener Chrome waits for before
 * it completes a download. The app is told what the download is (a `download` frame: address,
 * type, size when the server said it, Chrome's word on its danger) and answers with
 * downloads.decide: allowed, it goes on under the name Chrome chose; refused, it is cancelled.
 *
 * Fail closed: a download the app has not answered within HOLD_LIMIT_MS, or still held when
 * the connection ends, is cancelled (the app that would answer is gone), and a new connection
 * holds nothing until its app asks. More than MAX_HELD at once are cancelled, not held.
 *
 * A worker Chrome stops (a crash, an update, serviceworker-internals) takes its listener with
 * it, and Chrome then goes on with what it held under its own name. So what is held is
 * remembered (chrome.storage.local, which an update keeps: each download's id and start time),
 * and forgotten only once it is let go or undone; the next worker, woken by the download's
 * change (or its alarm, or the browser's next start), undoes what its predecessor held and
 * never let go (`recover`: cancelled if unfinished, its file removed if Chrome completed it).
 * A download let go is forgotten before Chrome hears so: a worker stopped in between never
 * undoes a download the app allowed. What cannot be remembered (the worker stopped within the
 * write) cannot be undone.
 */

import { CommandError } from "../shared/errors.js";
import { downloadFrame } from "../shared/frames.js";
import { ErrorCode, MAX_HELD_URL_LENGTH } from "../shared/protocol.js";

/** Longer than the app's longest approval (an hour), so only an app that is gone runs it out. */
export const HOLD_LIMIT_MS = 65 * 60 * 1000;
export const MAX_HELD = 20;
const MAX_NAME_LENGTH = 255;

/**
 * @typedef {object} ChromeDownloadItem what chrome.downloads gives a listener (the fields read)
 * @property {number} id
 * @property {string} [url]
 * @property {string} [finalUrl]
 * @property {string} [filename]
 * @property {string} [mime]
 * @property {number} [totalBytes]
 * @property {string} [danger]
 * @property {string} [startTime]
 */

/** @typedef {{id: number, start: string}} Remembered a held download as the next worker finds it */

export class DownloadHold {
  #downloads;
  #send;
  #remember;
  #setTimer;
  #clearTimer;
  #holding = false;
  /** @type {Map<number, {suggest: () => void, timer: unknown, start: string}>} */
  #held = new Map();
  /** @type {Map<number, string>} held, then not cancelled by Chrome, or a predecessor's not undone yet: by id, start time */
  #undo = new Map();

  /**
   * @param {object} deps
   * @param {{cancel: Function, removeFile: Function, search: Function}} deps.downloads chrome.downloads
   *   (through the facade)
   * @param {(frame: import("../shared/frames.js").DownloadFrame) => boolean} deps.send sends a frame to
   *   the app; false when it cannot
   * @param {(held: Remembered[]) => Promise<unknown>} deps.remember keeps what is held now where the
   *   next worker finds it (chrome.storage.local)
   * @param {(fn: () => void, ms: number) => unknown} [deps.setTimer]
   * @param {(timer: unknown) => void} [deps.clearTimer]
   */
  constructor({ downloads, send, remember, setTimer = (fn, ms) => setTimeout(fn, ms), clearTimer = (t) => clearTimeout(/** @type {any} */ (t)) }) {
    this.#downloads = downloads;
    this.#send = send;
    this.#remember = remember;
    this.#setTimer = setTimer;
    this.#clearTimer = clearTimer;
  }

  /** The connected app asked: downloads wait for its word from now on, for this connection. */
  hold() {
    this.#holding = true;
    return {};
  }

  /** @returns {number[]} the downloads waiting for the app's word */
  get held() {
    return [...this.#held.keys()];
  }

  /**
   * chrome.downloads.onDeterminingFilename's listener.
   *
   * @param {ChromeDownloadItem} item
   * @param {() => void} suggest Chrome's: the download goes on once it is called
   * @returns {boolean} true when suggest is called later (Chrome then waits for it)
   */
  determining(item, suggest) {
    if (!this.#holding) {
      return false; // Chrome goes on as if this listener were not there
    }
    if (this.#held.size >= MAX_HELD || !this.#send(downloadFrame(facts(item)))) {
      void this.#cancel(item.id, suggest).then((cancelled) => cancelled || this.#unfinished(item.id, start(item)));
      return true;
    }
    const timer = this.#setTimer(() => void this.decide(item.id, false).catch(() => undefined), HOLD_LIMIT_MS);
    this.#held.set(item.id, { suggest, timer, start: start(item) });
    void this.#remembered();
    return true;
  }

  /**
   * The app's word on a held download.
   *
   * @param {number} id
   * @param {boolean} allow
   * @returns {Promise<{}>}
   * @throws {CommandError} it is not held (decided already, or never told of)
   */
  async decide(id, allow) {
    const held = this.#held.get(id);
    if (held === undefined) {
      throw new CommandError(`Download ${id} is not waiting for a decision`, ErrorCode.INVALID_PARAMS);
    }
    this.#held.delete(id);
    this.#clearTimer(held.timer);
    if (allow) {
      await this.#remembered(); // forgotten first: a next worker never undoes what was allowed
      held.suggest();
    } else if (await this.#cancel(id, held.suggest)) {
      void this.#remembered();
    } else {
      this.#unfinished(id, held.start);
    }
    return {};
  }

  /**
   * Chrome did not cancel it: it stays unfinished, and a next worker tries again.
   * @param {number} id
   * @param {string} started
   */
  #unfinished(id, started) {
    this.#undo.set(id, started);
    void this.#remembered();
  }

  /**
   * A new worker starts: undo what a stopped one held and never let go (Chrome went on with it
   * when that worker's listener went): cancelled if unfinished, its file removed if complete.
   * Each is remembered until it is undone; one whose start time is not the one remembered is
   * another download (Chrome gave its id again) and is left alone.
   *
   * @param {unknown} remembered what the stopped worker kept (chrome.storage.local), read as untrusted
   */
  async recover(remembered) {
    for (const entry of Array.isArray(remembered) ? remembered.slice(0, 2 * MAX_HELD) : []) {
      if (Number.isSafeInteger(entry?.id) && entry.id >= 0 && typeof entry.start === "string" && entry.start.length <= 40) {
        this.#undo.set(entry.id, entry.start);
      }
    }
    for (const [id, started] of [...this.#undo]) {
      if (this.#held.has(id)) {
        this.#undo.delete(id);
        await this.decide(id, false); // Chrome asked this worker again: cancelled all the same
        continue;
      }
      try {
        const [item] = await this.#downloads.search({ id });
        if (item !== undefined && start(item) === started) {
          if (item.state === "in_progress") {
            await this.#downloads.cancel(id);
          } else if (item.state === "complete" && item.exists !== false) {
            await this.#downloads.removeFile(id);
          }
        }
        this.#undo.delete(id);
      } catch (error) {
        console.warn("Tabrelay: a download held when the worker stopped could not be undone", error);
      }
    }
    await this.#remembered();
  }

  /** What a next worker must undo if this one stops now, kept where it finds it. */
  async #remembered() {
    const held = [...this.#held].map(([id, { start }]) => ({ id, start }));
    const undo = [...this.#undo].map(([id, start]) => ({ id, start }));
    try {
      await this.#remember([...held, ...undo]);
    } catch (error) {
      console.warn("Tabrelay: held downloads not remembered", error);
    }
  }

  /** The connection ended: what it held is cancelled, and nothing more is held until asked. */
  connectionEnded() {
    this.#holding = false;
    for (const id of this.held) {
      this.decide(id, false).catch((error) => console.warn("Tabrelay: a held download was not cancelled", error));
    }
  }

  /**
   * Cancelled before Chrome is let go, so it never completes; one Chrome would not cancel is
   * never let go either (it stays unfinished).
   * @param {number} id
   * @param {() => void} suggest
   * @returns {Promise<boolean>} whether Chrome cancelled it
   */
  async #cancel(id, suggest) {
    try {
      await this.#downloads.cancel(id);
    } catch (error) {
      console.warn("Tabrelay: a held download could not be cancelled; it is left unfinished", error);
      return false;
    }
    try {
      suggest();
    } catch {
      // Chrome may refuse a name for a download it already cancelled.
    }
    return true;
  }
}

/**
 * When Chrome began a download (with its id, what tells it apart from a later one given that id).
 * @param {ChromeDownloadItem} item
 */
function start(item) {
  return String(item.startTime ?? "").slice(0, 40);
}

/**
 * What the app is told of a held download: bounded, and only its file's name, never a path.
 *
 * @param {ChromeDownloadItem} item
 * @returns {import("../shared/frames.js").HeldDownload}
 */
export function facts(item) {
  const name = String(item.filename ?? "").split(/[\\/]/).pop() ?? "";
  return {
    id: item.id,
    url: String(item.url ?? "").slice(0, MAX_HELD_URL_LENGTH),
    finalUrl: String(item.finalUrl ?? item.url ?? "").slice(0, MAX_HELD_URL_LENGTH),
    filename: name.slice(0, MAX_NAME_LENGTH),
    mime: String(item.mime ?? "").slice(0, 100),
    totalBytes: typeof item.totalBytes === "number" && Number.isSafeInteger(item.totalBytes) && item.totalBytes > 0 ? item.totalBytes : -1,
    danger: String(item.danger ?? "safe").slice(0, 40),
  };
}
