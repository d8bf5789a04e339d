// @ts-check
/**
 * What the extension tells the app right after authenticating: hello (who it is, what it can
 * do) and status (the tabs it has attached). Pure apart from the inputs it is given.
 */

import { helloFrame, statusFrame } from "../shared/frames.js";
import { EXTENDED_METHODS, FEATURES } from "../shared/protocol.js";

const PREFERRED_BRANDS = ["Google Chrome", "Microsoft Edge", "Brave", "Opera", "Vivaldi", "Chromium"];

/**
 * "Chrome 131", "Edge 130", "Chromium 156" from navigator.userAgentData, else the user agent.
 *
 * @param {{brands?: Array<{brand: string, version: string}>} | undefined} userAgentData
 * @param {string} userAgent
 * @returns {string}
 */
export function browserName(userAgentData, userAgent) {
  const brands = userAgentData?.brands ?? [];
  for (const preferred of PREFERRED_BRANDS) {
    const found = brands.find((b) => b.brand === preferred);
    if (found) {
      return `${preferred.replace(/^(Google|Microsoft) /, "")} ${found.version}`;
    }
  }
  const match = /(Edg|Chrome|Chromium)\/(\d+)/.exec(userAgent);
  if (match) {
    return `${match[1] === "Edg" ? "Edge" : match[1]} ${match[2]}`;
  }
  return "Chromium-based browser";
}

/**
 * @param {object} facts
 * @param {string} facts.version the extension's version (manifest)
 * @param {string} facts.browser
 * @param {string} facts.instance
 * @param {number[]} facts.attachedTabs
 * @returns {[import("../shared/frames.js").HelloFrame, import("../shared/frames.js").StatusFrame]}
 */
export function announcement({ version, browser, instance, attachedTabs }) {
  return [
    helloFrame({ extension: version, browser, capabilities: [...EXTENDED_METHODS, ...FEATURES], instance }),
    statusFrame(attachedTabs),
  ];
}
