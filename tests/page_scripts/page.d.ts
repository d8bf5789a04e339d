// What a page, the browser and Tabrelay's own worlds give the in-page scripts that the DOM's
// types do not name: read by the type check of every script (tests/unit/test_page_scripts_js.py).

interface Window {
  monaco?: any; // the Monaco editor's global, where a page has one
}
interface CSSStyleDeclaration {
  webkitTextSecurity: string; // text drawn as dots (Chrome's prefixed property)
}
interface Document {
  modelContext?: any; // WebMCP: the tools a page declares (Chromium behind a flag)
}

// Tabrelay's own world (page_world.js): a way back to the app, and a hook for its removal.
declare function TABRELAY_SEND(message: object): void;
declare function TABRELAY_ON_REMOVE(callback: () => void): void;

// The values a module puts in a template when it runs it (scripts.fill).
declare const REASON_TEXT: string;
declare const ATTRIBUTE_NAME: string;
declare const BINDING_NAME: string;
declare const MAX_MESSAGE_BYTES: number;
declare const WORLD_SOURCE: unknown;
