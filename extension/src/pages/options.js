// @ts-check
/**
 * The options page: the relay port, the pairing status, pair again, pair by hand.
 *
 * This page is the only place the relay port can change, and only by the person submitting the
 * form (a trusted event); the URL's query and fragment are never read (THREATS E5). The host is
 * not a setting at all. A pasted token goes to chrome.storage.local, never sync (THREATS E6).
 */

import { DEFAULT_RELAY_PORT } from "../shared/protocol.js";
import { parsePort, parseToken } from "../shared/validation.js";
import { describeState } from "./state_text.js";

/** @typedef {import("../background/relay_connection.js").RelayState} RelayState */

const PORT = "relayPort";
const TOKEN = "relayToken";
const RELAY_STATE = "relayState";

/** @param {string} id */
const element = (id) => /** @type {HTMLElement} */ (document.getElementById(id));
const portInput = /** @type {HTMLInputElement} */ (element("port"));
const tokenInput = /** @type {HTMLInputElement} */ (element("token"));

async function renderState() {
  const stored = await chrome.storage.session.get([RELAY_STATE]);
  const state = /** @type {RelayState | undefined} */ (stored[RELAY_STATE]);
  const { headline, detail, tone } = describeState(state);
  element("headline").textContent = headline;
  element("headline").dataset.tone = tone;
  element("headline").dataset.state = state?.state ?? "";
  element("detail").textContent = detail === headline ? "" : detail;
}

element("port-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  if (!event.isTrusted) return; // only the person, never a script, changes the port
  const port = parsePort(portInput.value);
  if (port === null) {
    element("port-status").textContent = "A port is a number from 1 to 65535.";
    return;
  }
  await chrome.storage.local.set({ [PORT]: port });
  element("port-status").textContent = `Saved. Tabrelay now connects to 127.0.0.1:${port}.`;
});

element("token-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  if (!event.isTrusted) return;
  const token = parseToken(tokenInput.value);
  if (token === null) {
    element("token-status").textContent = "That does not look like a Tabrelay credential.";
    return;
  }
  tokenInput.value = "";
  await chrome.storage.local.set({ [TOKEN]: token });
  element("token-status").textContent = "Saved. Connecting with this token…";
});

element("pair").addEventListener("click", async () => {
  const answer = await chrome.runtime.sendMessage({ type: "pair" });
  element("pair-status").textContent = answer?.ok ? "Asking the Tabrelay app…" : (answer?.error ?? "Failed.");
});

chrome.storage.onChanged.addListener((_changes, area) => {
  if (area === "session") renderState();
});

element("extension-id").textContent = chrome.runtime.id;
element("extension-id-2").textContent = chrome.runtime.id;
const stored = await chrome.storage.local.get([PORT]);
portInput.value = String(parsePort(stored[PORT]) ?? DEFAULT_RELAY_PORT);
await renderState();
setInterval(renderState, 1000);
